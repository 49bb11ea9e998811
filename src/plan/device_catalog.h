#pragma once
// Devices the planner knows: capacity, bandwidth and dense matmul throughput from the vendors' datasheets, plus the
// fraction of memory the OS/driver leaves to one process. `cpu` is not in the table: it is measured on the spot
// (system RAM from /proc/meminfo, bandwidth and compute from the roofline benchmark) and built with cpu_device().
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace kairo::plan {

struct DeviceSpec {
  std::string name;               // catalog key: "h100-sxm"
  std::string description;        // "NVIDIA H100 SXM 80GB"
  uint64_t memory_bytes = 0;      // total capacity (for unified-memory machines: the largest configuration)
  double bandwidth_gbs = 0.0;     // peak memory bandwidth, GB/s (1e9 bytes/s)
  double bf16_tflops = 0.0;       // dense bf16 matmul throughput (fp32 accumulate), 1e12 FLOP/s
  double int8_tops = 0.0;         // dense int8 matmul throughput, 1e12 OP/s
  bool unified_memory = false;    // weights and KV share memory with the OS (Apple silicon, CPU)
  double usable_fraction = 0.9;   // of memory_bytes, what one process can realistically allocate
  uint64_t runtime_overhead_bytes = 0;  // driver/context/allocator slack not covered by usable_fraction
  bool measured = false;          // numbers come from a measurement on this machine, not a datasheet

  uint64_t usable_bytes() const { return static_cast<uint64_t>(static_cast<double>(memory_bytes) * usable_fraction); }
};

const std::vector<DeviceSpec>& device_catalog();

// Catalog lookup by name (case-insensitive, '_' and '-' interchangeable). The error lists the known names.
Result<DeviceSpec> find_device(const std::string& name);

// The catalog entry for a GPU as its driver names it ("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe",
// "NVIDIA A100-SXM4-40GB"), using its memory size where the name alone is ambiguous; an error when the catalog has
// no such GPU. Used to show datasheet bandwidth next to what `kairo devices` reports.
Result<DeviceSpec> match_gpu(const std::string& reported_name, uint64_t memory_bytes);

// What the roofline measurement found on this machine.
struct CpuMeasurement {
  uint64_t mem_available_bytes = 0;  // what the process may allocate (plan/system_memory.h)
  std::string memory_limited_by;     // which bound gave it, when not MemAvailable ("ulimit -v", ...)
  double bandwidth_gbs = 0.0;        // best streaming read (with software prefetch), all threads
  double int8_tops = 0.0;            // best int8 dot throughput (AMX or VNNI), all threads
  double bf16_tflops = 0.0;          // best bf16 dot throughput, all threads
  int n_threads = 1;
};

// The `cpu` device: capacity is what is available now (not total RAM), so usable_fraction keeps a margin for the
// page cache and other processes.
DeviceSpec cpu_device(const CpuMeasurement& m);

}  // namespace kairo::plan
