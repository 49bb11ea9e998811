#include "core/out_of_memory.h"

#include <sys/resource.h>

#include <cstdio>

#include "core/format.h"

namespace kairo {

OutOfMemory::OutOfMemory(uint64_t bytes, const char* purpose) noexcept : bytes_(bytes) {
  // human_bytes' units, without its std::string.
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char size[32];
  if (u == 0) {
    std::snprintf(size, sizeof(size), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(size, sizeof(size), "%.2f %s", v, units[u]);
  }
  std::snprintf(message_, sizeof(message_), "cannot allocate %s%s%s", size, purpose ? " of " : "",
                purpose ? purpose : "");
}

std::string describe_allocation_failure(const std::bad_alloc& e) {
  if (const auto* oom = dynamic_cast<const OutOfMemory*>(&e)) return oom->what();
  return "an allocation failed";
}

std::string address_space_limit_note() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  return strprintf("; this process may map at most %s (ulimit -v)", human_bytes(limit.rlim_cur).c_str());
}

}  // namespace kairo
