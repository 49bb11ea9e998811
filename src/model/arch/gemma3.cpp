// Gemma 3 (text): gemma2's block with a per-head RMS norm of Q and K before rope instead of soft-capping, and five
// sliding-window layers for every global one (layers 5, 11, 17 ... are global). The windowed layers rope with their
// own base (rope.freq_base_swa, 10000) and no scaling; the global ones with rope.freq_base (1e6) and the file's
// linear scaling (x8 on the 4B-27B models). The 27B model (62 layers) scales queries by 1 / sqrt(dim / heads).
#include "model/arch/arch.h"

namespace kairo::model {
const ArchSpec& gemma3_arch() {
  static const ArchSpec spec = [] {
    ArchSpec s{"gemma3", kernels::RopeStyle::Neox, /*qkv_bias=*/false, 1000000.0f, /*qk_norm=*/true};
    s.gemma = true;
    s.swa_pattern = 6;
    s.swa_rope = true;
    s.dim_per_head_scale_layers = 62;
    return s;
  }();
  return spec;
}
}  // namespace kairo::model
