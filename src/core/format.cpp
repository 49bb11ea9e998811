#include "core/format.h"

#include <cstdio>
#include <vector>

namespace kairo {

std::string strprintf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

std::string human_bytes(uint64_t n_bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n_bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? strprintf("%llu B", static_cast<unsigned long long>(n_bytes)) : strprintf("%.2f %s", v, units[u]);
}

std::string quote_for_error(const std::string& s, size_t max_len) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < max_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += strprintf("\\x%02x", c);
    }
  }
  if (s.size() > max_len) out += "...";
  out += "\"";
  return out;
}

}  // namespace kairo
