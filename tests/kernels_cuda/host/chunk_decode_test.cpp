// The chunk decoders the CUDA kernels use, run on the host over the packed layout: every value of every chunk must
// land on the column and value the reference dequantizer gives, bit for bit.
#include "kernels/cuda/chunk_decode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/packed_layout.h"
#include "kernels/kernel_test_util.h"
#include "tensor/dequant.h"

namespace kairo::kernels::cuda {
namespace {

struct Case {
  DType type;
  int64_t n_cols;
};

class ChunkDecodeTest : public ::testing::TestWithParam<Case> {};

template <DType T>
void decode_all(const PackedLayout& l, const std::vector<uint8_t>& packed, std::vector<float>& out,
                std::vector<int>& hits) {
  using D = ChunkDecoder<T>;
  const auto* scales =
      l.scale_row_elems > 0 ? reinterpret_cast<const uint16_t*>(packed.data() + l.scales_offset) : nullptr;
  for (int64_t r = 0; r < l.n_rows; ++r) {
    const uint8_t* qrow = packed.data() + r * l.qs_row_bytes;
    const uint16_t* srow = scales != nullptr ? scales + r * l.scale_row_elems : nullptr;
    for (int64_t c = 0; c < l.n_chunks; ++c) {
      float q[D::kCols], a[D::kRuns], b[D::kRuns];
      D::decode(D::load(qrow, srow, c), c, q, a, b);
      for (int j = 0; j < D::kCols; ++j) {
        const int64_t col = D::col(c, j);
        int64_t c2;
        int j2;
        D::locate(col, &c2, &j2);
        ASSERT_EQ(c2, c) << "col " << col;
        ASSERT_EQ(j2, j) << "col " << col;
        const float w = chunk_value<D>(q, a, b, j);
        if (col >= l.n_cols) {
          EXPECT_EQ(w, 0.0f) << "padding column " << col << " must decode to zero";
          continue;
        }
        out[static_cast<size_t>(r * l.n_cols + col)] = w;
        ++hits[static_cast<size_t>(r * l.n_cols + col)];
      }
    }
  }
}

TEST_P(ChunkDecodeTest, MatchesReferenceDequantBitForBit) {
  const Case p = GetParam();
  const int64_t n_rows = 5;
  std::mt19937 rng(1234 + static_cast<int>(p.type));
  const size_t rb = row_bytes(p.type, p.n_cols);
  std::vector<uint8_t> gguf(rb * n_rows);
  for (int64_t r = 0; r < n_rows; ++r) testing::random_row(rng, p.type, p.n_cols, gguf.data() + r * rb);

  const Result<PackedLayout> l = packed_layout(p.type, n_rows, p.n_cols);
  ASSERT_TRUE(l.ok()) << l.error().message;
  std::vector<uint8_t> packed(static_cast<size_t>(l->total_bytes));
  pack_matrix(*l, gguf.data(), rb, packed.data());

  std::vector<float> got(static_cast<size_t>(n_rows * p.n_cols), -12345.0f);
  std::vector<int> hits(got.size(), 0);
  ASSERT_TRUE(dispatch_weight_type(p.type, [&]<DType T>() { decode_all<T>(*l, packed, got, hits); }));

  std::vector<float> want(got.size());
  for (int64_t r = 0; r < n_rows; ++r) dequantize_row(p.type, gguf.data() + r * rb, want.data() + r * p.n_cols, p.n_cols);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(hits[i], 1) << "element " << i << " decoded " << hits[i] << " times";
    uint32_t gb, wb;
    std::memcpy(&gb, &got[i], 4);
    std::memcpy(&wb, &want[i], 4);
    ASSERT_EQ(gb, wb) << "element " << i << ": " << got[i] << " vs " << want[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Types, ChunkDecodeTest,
                         ::testing::Values(Case{DType::F32, 6}, Case{DType::F32, 64}, Case{DType::F16, 100},
                                           Case{DType::F16, 256}, Case{DType::BF16, 36}, Case{DType::Q8_0, 512},
                                           Case{DType::Q4_0, 512}, Case{DType::Q4_K, 768},
                                           Case{DType::Q5_K, 768}, Case{DType::Q6_K, 768}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(dtype_name(info.param.type)) + "_" + std::to_string(info.param.n_cols);
                         });

}  // namespace
}  // namespace kairo::kernels::cuda
