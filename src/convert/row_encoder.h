#pragma once
// Writes a tensor row by row without holding it whole: rows are produced as floats (random numbers for synth, a
// dequantized source row for quantize), encoded to the target type on every thread of the pool, and appended to a
// GGUF stream in chunks of a few MiB. Memory stays bounded however large the tensor (an 8B model's 128k x 4096
// embedding is 2 GiB as floats).
#include <cstdint>
#include <functional>

#include "core/result.h"
#include "core/thread_pool.h"
#include "gguf/writer.h"
#include "tensor/dtype.h"

namespace kairo::convert {

// Writes row `row` (n_cols floats) into `out`. Called concurrently for different rows: must be thread-safe, and
// its result must depend on the row only (so files do not depend on the thread count).
using RowSource = std::function<void(int64_t row, float* out)>;

// Encodes rows [0, n_rows) of a [n_rows, n_cols] tensor to `type` and appends them to `stream`.
// Precondition: n_cols is a multiple of type's block size and can_quantize_to(type).
Status stream_rows(gguf::TensorStream& stream, DType type, int64_t n_cols, int64_t n_rows, const RowSource& source,
                   ThreadPool& pool);

}  // namespace kairo::convert
