#pragma once
// What the OS can give this process now: MemAvailable from /proc/meminfo (free memory plus reclaimable cache).
#include <cstdint>
#include <string>

#include "core/result.h"

namespace kairo::plan {

Result<uint64_t> read_mem_available();
// Parses the text of /proc/meminfo (exposed for tests).
Result<uint64_t> parse_mem_available(const std::string& meminfo_text);

}  // namespace kairo::plan
