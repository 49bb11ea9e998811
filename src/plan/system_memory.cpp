#include "plan/system_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kairo::plan {
namespace {

// /proc and /sys files report size 0, so read them as a stream rather than by stat size.
std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Limits at or above 2^62 bytes are how cgroup v1 writes "no limit" (a page-rounded LONG_MAX).
constexpr uint64_t kNoLimit = 1ull << 62;

struct CgroupFiles {
  const char* limit;
  const char* usage;
  const char* inactive_file_key;
};

// The memory cgroup the process sees at the mount root: in a container (cgroup namespace) that is its own cgroup.
// v2 first (one unified hierarchy), then v1's memory controller.
std::optional<uint64_t> cgroup_headroom_here() {
  static constexpr struct {
    const char* dir;
    CgroupFiles files;
  } kLayouts[] = {
      {"/sys/fs/cgroup/", {"memory.max", "memory.current", "inactive_file"}},
      {"/sys/fs/cgroup/memory/", {"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"}},
  };
  for (const auto& layout : kLayouts) {
    const std::string dir = layout.dir;
    const auto limit_text = read_text(dir + layout.files.limit);
    if (!limit_text) continue;
    const std::optional<uint64_t> limit = parse_cgroup_limit(*limit_text);
    if (!limit) return std::nullopt;
    const auto usage_text = read_text(dir + layout.files.usage);
    if (!usage_text) return std::nullopt;
    const std::optional<uint64_t> usage = parse_cgroup_limit(*usage_text);
    const uint64_t reclaimable = parse_memory_stat(read_text(dir + "memory.stat").value_or(""),
                                                   layout.files.inactive_file_key);
    return cgroup_headroom(*limit, usage.value_or(0), reclaimable);
  }
  return std::nullopt;
}

std::optional<uint64_t> address_space_headroom(uint64_t already_mapped_bytes) {
  rlimit lim{};
  if (getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const std::optional<uint64_t> used = parse_vm_size(read_text("/proc/self/status").value_or(""));
  if (!used) return std::nullopt;
  const uint64_t in_use = *used - std::min(*used, already_mapped_bytes);
  return lim.rlim_cur > in_use ? lim.rlim_cur - in_use : 0;
}

}  // namespace

Result<uint64_t> parse_mem_available(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") break;
    return kib * 1024;
  }
  return Error{"/proc/meminfo has no 'MemAvailable: N kB' line; give the memory size with --mem-gb"};
}

std::optional<uint64_t> parse_cgroup_limit(const std::string& text) {
  std::istringstream in(text);
  uint64_t bytes = 0;
  if (!(in >> bytes) || bytes >= kNoLimit) return std::nullopt;  // "max" does not parse as a number
  return bytes;
}

uint64_t parse_memory_stat(const std::string& stat_text, const std::string& key) {
  std::istringstream in(stat_text);
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

std::optional<uint64_t> parse_vm_size(const std::string& status_text) {
  std::istringstream in(status_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    uint64_t kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

uint64_t cgroup_headroom(uint64_t limit, uint64_t usage, uint64_t reclaimable) {
  const uint64_t working_set = usage - std::min(usage, reclaimable);
  return limit > working_set ? limit - working_set : 0;
}

Result<MemoryHeadroom> read_memory_headroom(uint64_t already_mapped_bytes) {
  const std::optional<std::string> meminfo = read_text("/proc/meminfo");
  if (!meminfo) return Error{"cannot read /proc/meminfo; give the memory size with --mem-gb"};
  KAIRO_TRY_ASSIGN(const uint64_t available, parse_mem_available(*meminfo));
  MemoryHeadroom h{available, "MemAvailable"};
  if (const auto cgroup = cgroup_headroom_here(); cgroup && *cgroup < h.bytes) h = {*cgroup, "the cgroup memory limit"};
  if (const auto as = address_space_headroom(already_mapped_bytes); as && *as < h.bytes)
    h = {*as, "ulimit -v"};
  return h;
}

Result<uint64_t> read_mem_available() {
  KAIRO_TRY_ASSIGN(const MemoryHeadroom h, read_memory_headroom());
  return h.bytes;
}

}  // namespace kairo::plan
