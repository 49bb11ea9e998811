#pragma once
// Device-side helpers for benchmarks: the measured read bandwidth (the roofline the decode GEMV is judged
// against, as `kairo bench roofline` measures it for the CPU) and cheap on-device fills for synthetic weights.
#include <cstddef>
#include <cstdint>

namespace kairo::kernels::cuda {

// GB/s (1e9 bytes) of a read-only streaming kernel over `bytes` of device memory, best of `iters` runs.
double measure_read_bandwidth(size_t bytes, int iters);
// Pseudo-random bytes (a hash of the index and seed), enqueued on the context stream.
void fill_random_bytes(void* dst, size_t bytes, uint32_t seed);
// n copies of a 16-bit pattern (e.g. a sane f16 scale), enqueued on the context stream.
void fill_u16(uint16_t* dst, size_t n, uint16_t value);

}  // namespace kairo::kernels::cuda
