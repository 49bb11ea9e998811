// Reference dequantization of MXFP4 (tensor/blocks.h): the doubled E2M1 value of each nibble times the halved E8M0
// scale, as ggml's dequantize_row_mxfp4 computes it (one float product per value, so exact).
#include "tensor/dequant.h"

namespace kairo {

void dequantize_blocks(const BlockMXFP4* src, float* dst, int64_t n_blocks) {
  for (int64_t i = 0; i < n_blocks; ++i, dst += kQK) {
    const BlockMXFP4& b = src[i];
    const float d = mxfp4_scale(b.e);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(kMxfp4Values[b.qs[j] & 0x0F]) * d;
      dst[j + kQK / 2] = static_cast<float>(kMxfp4Values[b.qs[j] >> 4]) * d;
    }
  }
}

}  // namespace kairo
