#pragma once
// What the OS can give this process now: the least of
//  - the machine's MemAvailable (/proc/meminfo: free memory plus reclaimable cache);
//  - the headroom under the process's memory cgroup limit (a container's memory limit, cgroup v2 memory.max or v1
//    memory.limit_in_bytes), counting the cgroup's reclaimable inactive file cache as free, as the kernel does before
//    it kills anything;
//  - the headroom under RLIMIT_AS (`ulimit -v`): every mapping counts there, the model file's included.
// MemAvailable alone is what the machine has, but a process in a container with a 4 GiB limit on a 64 GiB host, or
// under `ulimit -v`, fails on an allocation the plan said would fit.
#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace kairo::plan {

struct MemoryHeadroom {
  uint64_t bytes = 0;
  std::string limited_by;  // "MemAvailable", "the cgroup memory limit" or "ulimit -v"
};

// already_mapped_bytes: mappings this process has made that the caller's plan counts again (the model's weights,
// mapped before the plan is made): they are in the address space already, so RLIMIT_AS's headroom gets them back.
Result<MemoryHeadroom> read_memory_headroom(uint64_t already_mapped_bytes = 0);
// read_memory_headroom().bytes.
Result<uint64_t> read_mem_available();

// Parsers and the arithmetic, exposed for tests.
Result<uint64_t> parse_mem_available(const std::string& meminfo_text);
// A cgroup limit file's value: a byte count, or no limit ("max", or v1's near-2^63 "unlimited").
std::optional<uint64_t> parse_cgroup_limit(const std::string& text);
// The value of `key` in a memory.stat text ("inactive_file 1234"), 0 when absent.
uint64_t parse_memory_stat(const std::string& stat_text, const std::string& key);
// VmSize from /proc/self/status, in bytes; nullopt when absent.
std::optional<uint64_t> parse_vm_size(const std::string& status_text);
// limit - (usage - reclaimable), 0 when usage is over it.
uint64_t cgroup_headroom(uint64_t limit, uint64_t usage, uint64_t reclaimable);

}  // namespace kairo::plan
