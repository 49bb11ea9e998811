#include "convert/row_encoder.h"

#include <algorithm>
#include <vector>

#include "tensor/quantize.h"

namespace kairo::convert {

Status stream_rows(gguf::TensorStream& stream, DType type, int64_t n_cols, int64_t n_rows, const RowSource& source,
                   ThreadPool& pool) {
  const size_t out_row_bytes = row_bytes(type, n_cols);
  // About 16 MiB of output per chunk, at least one row per thread so both cores stay busy.
  constexpr size_t kChunkBytes = size_t{16} << 20;
  const int64_t chunk_rows = std::max<int64_t>(pool.n_threads(), static_cast<int64_t>(kChunkBytes / out_row_bytes));
  std::vector<uint8_t> out(static_cast<size_t>(std::min(chunk_rows, n_rows)) * out_row_bytes);
  for (int64_t begin = 0; begin < n_rows; begin += chunk_rows) {
    const int64_t n = std::min(chunk_rows, n_rows - begin);
    pool.parallel_for(n, [&](int64_t lo, int64_t hi) {
      std::vector<float> row(static_cast<size_t>(n_cols));
      for (int64_t r = lo; r < hi; ++r) {
        source(begin + r, row.data());
        quantize_row(type, row.data(), out.data() + static_cast<size_t>(r) * out_row_bytes, n_cols);
      }
    });
    KAIRO_TRY_STATUS(stream.write(out.data(), static_cast<size_t>(n) * out_row_bytes));
  }
  return {};
}

}  // namespace kairo::convert
