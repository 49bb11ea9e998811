#include "plan/system_memory.h"

#include <fstream>
#include <sstream>

namespace kairo::plan {

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

Result<uint64_t> read_mem_available() {
  // /proc files report size 0, so read them as a stream rather than by stat size.
  std::ifstream in("/proc/meminfo");
  if (!in) return Error{"cannot read /proc/meminfo; give the memory size with --mem-gb"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mem_available(text.str());
}

}  // namespace kairo::plan
