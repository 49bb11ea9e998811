#pragma once
// `kairo bench roofline`: the two ceilings every number in this project is compared to. Decode streams the weights,
// so memory read bandwidth bounds it; prefill and batched decode multiply int8/bf16 matrices, so dot-product
// throughput bounds them. Measured with the widest loads and dot instructions the CPU has (AVX-512 / AVX2, VNNI,
// AMX tiles), on one thread and on all.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/device_catalog.h"

namespace kairo::bench {

struct RooflineOptions {
  size_t buffer_bytes = size_t{1} << 30;  // must exceed the last-level cache by far (this machine: 480 MiB L3)
  int n_threads = 0;                      // 0: every core this process may use
  double seconds_per_test = 0.25;         // each figure is the best of repeated runs filling about this long
};

struct RooflineFigure {
  std::string name;     // "read", "int8", "bf16"
  std::string kernel;   // "avx512", "avx2", "avx512-vnni", "amx", "avx512-bf16"
  std::string unit;     // "GB/s", "TOP/s", "TFLOP/s"
  int n_threads = 1;
  double value = 0.0;
};

struct RooflineResult {
  int n_threads = 1;
  size_t buffer_bytes = 0;
  std::vector<RooflineFigure> figures;  // every kernel measured, 1 thread and n_threads
  // The best of each kind on all threads (what the planner uses) and on one thread.
  double read_gbs = 0, read_gbs_1t = 0;                    // plain streaming read (figure "read")
  double read_prefetch_gbs = 0, read_prefetch_gbs_1t = 0;  // with software prefetch ("read-prefetch")
  double int8_tops = 0, int8_tops_1t = 0;
  double bf16_tflops = 0, bf16_tflops_1t = 0;
};

RooflineResult measure_roofline(const RooflineOptions& options);

// The `cpu` device of the planner: MemAvailable now plus a quick measurement.
plan::CpuMeasurement measure_cpu(const RooflineOptions& options, uint64_t mem_available_bytes);

}  // namespace kairo::bench
