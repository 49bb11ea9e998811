#pragma once
// The counter-based generator `kairo synth` and `kairo lora synth` draw weights from: every row is keyed by (seed,
// tensor name, row), so rows can be produced in any order on any thread and a file does not depend on the thread
// count.
#include <cstdint>
#include <string>

namespace kairo::convert {

// FNV-1a of the tensor name: the per-tensor key.
uint64_t tensor_key(const std::string& name);

// Fills one row with N(0, stddev^2) numbers (Marsaglia's polar method: no trigonometry).
void normal_row(uint64_t seed, uint64_t key, int64_t row, float stddev, float* out, int64_t n);

}  // namespace kairo::convert
