#include "plan/device_catalog.h"

#include <algorithm>
#include <cctype>

#include "core/format.h"

namespace kairo::plan {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

// GPU capacity is what the driver reports (nvidia-smi / rocm-smi MiB), not the marketing "GB"; Apple quotes GiB.
// CUDA/ROCm contexts plus library workspaces take about 1 GiB before any tensor is allocated; vLLM's default
// gpu_memory_utilization of 0.9 is the usable fraction. macOS lets the GPU wire about 75 % of RAM by default.
DeviceSpec gpu(const char* name, const char* desc, uint64_t mib, double gbs, double bf16, double int8) {
  DeviceSpec d;
  d.name = name;
  d.description = desc;
  d.memory_bytes = mib * kMiB;
  d.bandwidth_gbs = gbs;
  d.bf16_tflops = bf16;
  d.int8_tops = int8;
  d.unified_memory = false;
  d.usable_fraction = 0.90;
  d.runtime_overhead_bytes = 1 * kGiB;
  return d;
}

DeviceSpec apple(const char* name, const char* desc, uint64_t gib, double gbs, double tflops) {
  DeviceSpec d;
  d.name = name;
  d.description = desc;
  d.memory_bytes = gib * kGiB;
  d.bandwidth_gbs = gbs;
  // Apple GPUs have no faster int8 path for matmuls; both run at the fp16/bf16 ALU rate.
  d.bf16_tflops = tflops;
  d.int8_tops = tflops;
  d.unified_memory = true;
  d.usable_fraction = 0.75;
  d.runtime_overhead_bytes = kGiB / 2;
  return d;
}

std::vector<DeviceSpec> make_catalog() {
  // Dense (no structured sparsity) tensor-core throughput; consumer cards at fp32 accumulate.
  return {
      gpu("h200", "NVIDIA H200 SXM 141GB (HBM3e)", 143771, 4800, 989, 1979),
      gpu("h100-sxm", "NVIDIA H100 SXM 80GB (HBM3)", 81559, 3350, 989, 1979),
      gpu("h100-pcie", "NVIDIA H100 PCIe 80GB (HBM2e)", 81559, 2000, 756, 1513),
      gpu("a100-40gb", "NVIDIA A100 SXM 40GB (HBM2)", 40960, 1555, 312, 624),
      gpu("a100-80gb", "NVIDIA A100 SXM 80GB (HBM2e)", 81920, 2039, 312, 624),
      gpu("l40s", "NVIDIA L40S 48GB (GDDR6)", 46068, 864, 362, 733),
      gpu("rtx-4090", "NVIDIA GeForce RTX 4090 24GB (GDDR6X)", 24564, 1008, 165, 660),
      gpu("rtx-3090", "NVIDIA GeForce RTX 3090 24GB (GDDR6X)", 24576, 936, 71, 284),
      gpu("mi300x", "AMD Instinct MI300X 192GB (HBM3)", 196592, 5300, 1307, 2615),
      apple("m2-max", "Apple M2 Max, 38-core GPU, 96GB", 96, 400, 13.6),
      apple("m2-ultra", "Apple M2 Ultra, 76-core GPU, 192GB", 192, 800, 27.2),
      apple("m3-max", "Apple M3 Max, 40-core GPU, 128GB", 128, 400, 16.4),
      apple("m3-ultra", "Apple M3 Ultra, 80-core GPU, 512GB", 512, 819, 32.8),
      apple("m4-max", "Apple M4 Max, 40-core GPU, 128GB", 128, 546, 18.4),
  };
}

std::string normalize(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == ' ') c = '-';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

const std::vector<DeviceSpec>& device_catalog() {
  static const std::vector<DeviceSpec> catalog = make_catalog();
  return catalog;
}

Result<DeviceSpec> find_device(const std::string& name) {
  const std::string key = normalize(name);
  for (const auto& d : device_catalog()) {
    if (d.name == key) return d;
  }
  std::string names = "cpu";
  for (const auto& d : device_catalog()) names += ", " + d.name;
  return Error{strprintf("unknown device %s; known devices: %s (or describe your own with --mem-gb, "
                         "--bandwidth-gbs and --tflops)",
                         quote_for_error(name).c_str(), names.c_str())};
}

Result<DeviceSpec> match_gpu(const std::string& reported_name, uint64_t memory_bytes) {
  std::string name;
  for (char c : reported_name) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto has = [&](const char* word) { return name.find(word) != std::string::npos; };
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  const char* key = nullptr;
  if (has("h200")) key = "h200";
  else if (has("h100")) key = has("pcie") ? "h100-pcie" : "h100-sxm";
  else if (has("a100")) key = gib > 60 ? "a100-80gb" : "a100-40gb";
  else if (has("l40s")) key = "l40s";
  else if (has("4090")) key = "rtx-4090";
  else if (has("3090")) key = "rtx-3090";
  else if (has("mi300x")) key = "mi300x";
  if (key == nullptr) return Error{"no catalog entry for " + quote_for_error(reported_name)};
  return find_device(key);
}

DeviceSpec cpu_device(const CpuMeasurement& m) {
  DeviceSpec d;
  d.name = "cpu";
  d.description = strprintf("this machine's CPU (%d threads), measured now", m.n_threads);
  if (!m.memory_limited_by.empty() && m.memory_limited_by != "MemAvailable")
    d.description += "; its memory limited by " + m.memory_limited_by;
  d.memory_bytes = m.mem_available_bytes;
  d.bandwidth_gbs = m.bandwidth_gbs;
  d.bf16_tflops = m.bf16_tflops;
  d.int8_tops = m.int8_tops;
  d.unified_memory = true;
  // MemAvailable already excludes what other processes hold; keep 10 % for the page cache and later growth.
  d.usable_fraction = 0.90;
  d.runtime_overhead_bytes = 128ull << 20;  // thread stacks, allocator slack, the HTTP server
  d.measured = true;
  return d;
}

}  // namespace kairo::plan
