#include "model/config.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"
#include "model/arch/arch.h"

namespace kairo::model {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Reads <arch>.<key> as a positive int that fits the limit.
Result<int> read_positive(const gguf::File& f, const std::string& key, uint64_t limit) {
  KAIRO_TRY_ASSIGN(const uint64_t v, f.get_uint(key));
  if (v == 0 || v > limit) {
    return Error{strprintf("%s: metadata '%s' is %llu, expected 1 to %llu", f.path().c_str(), key.c_str(),
                           static_cast<unsigned long long>(v), static_cast<unsigned long long>(limit))};
  }
  return static_cast<int>(v);
}

// YaRN (Peng et al. 2023, as llama.cpp's ggml_rope_yarn and Hugging Face's _compute_yarn_parameters): pair i keeps
// its original frequency where its wavelength is short (i below the beta_fast correction dimension), takes the
// interpolated one (original / factor) where it is long (above beta_slow's), and a linear blend between; cos and sin
// are scaled by 1 + 0.1 ln(factor).
Status read_yarn(const gguf::File& f, const std::string& a, ModelConfig& c) {
  KAIRO_TRY_ASSIGN(const double factor, f.get_float(a + ".rope.scaling.factor"));
  KAIRO_TRY_ASSIGN(const uint64_t n_ctx_orig, f.get_uint_or(a + ".rope.scaling.original_context_length", 0));
  KAIRO_TRY_ASSIGN(const double beta_fast, f.get_float_or(a + ".rope.scaling.yarn_beta_fast", 32.0));
  KAIRO_TRY_ASSIGN(const double beta_slow, f.get_float_or(a + ".rope.scaling.yarn_beta_slow", 1.0));
  if (!(factor >= 1.0) || factor > 1024.0 || n_ctx_orig == 0 || !(beta_fast > beta_slow) || !(beta_slow > 0.0)) {
    return Error{strprintf("%s: YaRN needs %s.rope.scaling.factor in [1, 1024] (is %g), "
                           "rope.scaling.original_context_length > 0 (is %llu) and yarn_beta_fast > yarn_beta_slow > 0 "
                           "(are %g, %g)",
                           f.path().c_str(), a.c_str(), factor, static_cast<unsigned long long>(n_ctx_orig), beta_fast,
                           beta_slow)};
  }
  const int n_rot = c.rope.n_rot;
  const double base = c.rope.freq_base;
  // The pair index whose wavelength fits `n_rotations` times into the original context.
  auto corr_dim = [&](double n_rotations) {
    return n_rot * std::log(static_cast<double>(n_ctx_orig) / (n_rotations * 2 * M_PI)) / (2 * std::log(base));
  };
  const double low = std::max(0.0, std::floor(corr_dim(beta_fast)));
  const double high = std::min(static_cast<double>(n_rot - 1), std::ceil(corr_dim(beta_slow)));
  c.yarn_freq_factors.resize(static_cast<size_t>(n_rot / 2));
  for (int i = 0; i < n_rot / 2; ++i) {
    const double y = (i - low) / std::max(0.001, high - low);
    const double keep = 1.0 - std::min(1.0, std::max(0.0, y));  // 1: original frequency, 0: interpolated
    c.yarn_freq_factors[static_cast<size_t>(i)] = static_cast<float>(1.0 / (keep + (1.0 - keep) / factor));
  }
  c.rope.mscale = static_cast<float>(1.0 + 0.1 * std::log(factor));
  return {};
}

Status read_rope_scaling_type(const gguf::File& f, const std::string& a, ModelConfig& c) {
  std::string type = "none";
  KAIRO_TRY_ASSIGN(type, f.get_string_or(a + ".rope.scaling.type", "none"));
  if (type == "none") return {};
  if (type == "linear") {
    KAIRO_TRY_ASSIGN(const double factor, f.get_float(a + ".rope.scaling.factor"));
    if (!(factor > 0.0) || factor > 1024.0) {
      return Error{strprintf("%s: %s.rope.scaling.factor is %g, expected a value in (0, 1024]", f.path().c_str(),
                             a.c_str(), factor)};
    }
    c.rope.freq_scale = static_cast<float>(1.0 / factor);
    return {};
  }
  if (type == "yarn") return read_yarn(f, a, c);
  return Error{strprintf("%s: rope scaling type '%s' is not supported (supported: none, linear, yarn); use a model "
                         "without %s.rope.scaling.type or convert it with linear scaling",
                         f.path().c_str(), type.c_str(), a.c_str())};
}

// The scaling type, then what applies to any type, as llama.cpp reads it: rope.scaling.attn_factor multiplies cos
// and sin on every layer (phi3's long-context files carry sqrt(1 + ln(scale) / ln(original context)) there), and
// rope.scaling.original_context_length is the context the long-rope factors switch at (ModelWeights).
Status read_rope_scaling(const gguf::File& f, const std::string& a, ModelConfig& c) {
  KAIRO_TRY_STATUS(read_rope_scaling_type(f, a, c));
  KAIRO_TRY_ASSIGN(const double attn_factor, f.get_float_or(a + ".rope.scaling.attn_factor", 1.0));
  if (!(attn_factor > 0.0) || attn_factor > 16.0) {
    return Error{strprintf("%s: %s.rope.scaling.attn_factor is %g, expected a value in (0, 16]", f.path().c_str(),
                           a.c_str(), attn_factor)};
  }
  c.rope.mscale *= static_cast<float>(attn_factor);
  KAIRO_TRY_ASSIGN(const uint64_t n_ctx_orig, f.get_uint_or(a + ".rope.scaling.original_context_length", 0));
  c.rope_original_context = static_cast<int64_t>(std::min<uint64_t>(n_ctx_orig, uint64_t{1} << 40));
  return {};
}

// <arch>.expert_count / expert_used_count / expert_feed_forward_length (the expert width defaults to the dense
// feed_forward_length, as Mixtral-style llama files leave it).
Status read_experts(const gguf::File& f, const ArchSpec& spec, ModelConfig& c) {
  const std::string& a = c.arch;
  KAIRO_TRY_ASSIGN(const uint64_t n_experts, f.get_uint_or(a + ".expert_count", 0));
  if (n_experts == 0) {
    if (spec.experts == ArchSpec::Experts::Required) {
      return Error{strprintf("%s: %s.expert_count is missing or 0; a %s model is a mixture of experts",
                             f.path().c_str(), a.c_str(), a.c_str())};
    }
    return {};
  }
  if (spec.experts == ArchSpec::Experts::None) {
    return Error{strprintf("%s: %s.expert_count is %llu, but kairo runs %s only as a dense model (mixtures of experts: "
                           "llama, qwen3moe)",
                           f.path().c_str(), a.c_str(), static_cast<unsigned long long>(n_experts), a.c_str())};
  }
  if (n_experts > 1024) {
    return Error{strprintf("%s: %s.expert_count is %llu, expected at most 1024", f.path().c_str(), a.c_str(),
                           static_cast<unsigned long long>(n_experts))};
  }
  c.n_experts = static_cast<int>(n_experts);
  KAIRO_TRY_ASSIGN(c.n_experts_used, read_positive(f, a + ".expert_used_count", n_experts));
  KAIRO_TRY_ASSIGN(const uint64_t width, f.get_uint_or(a + ".expert_feed_forward_length", c.ffn_dim));
  if (width == 0 || width > (1u << 22)) {
    return Error{strprintf("%s: %s.expert_feed_forward_length is %llu, expected 1 to %u", f.path().c_str(), a.c_str(),
                           static_cast<unsigned long long>(width), 1u << 22)};
  }
  c.expert_ffn_dim = static_cast<int>(width);
  return {};
}

// Soft-capping values and the sliding window (with the windowed layers' rope).
Status read_gemma_extras(const gguf::File& f, const ArchSpec& spec, ModelConfig& c) {
  const std::string& a = c.arch;
  for (auto [key, field] : {std::pair{".attn_logit_softcapping", &c.attn_softcap},
                            std::pair{".final_logit_softcapping", &c.final_softcap}}) {
    KAIRO_TRY_ASSIGN(const double cap, f.get_float_or(a + key, 0.0));
    if (!(cap >= 0.0) || cap > 1e6) {
      return Error{strprintf("%s: %s%s is %g, expected a positive number (or absent)", f.path().c_str(), a.c_str(),
                             key, cap)};
    }
    *field = static_cast<float>(cap);
  }
  c.rope_swa = c.rope;
  if (spec.swa_pattern == 0) return {};
  KAIRO_TRY_ASSIGN(const uint64_t window, f.get_uint(a + ".attention.sliding_window"));
  if (window == 0 || window > (1u << 24)) {
    return Error{strprintf("%s: %s.attention.sliding_window is %llu, expected 1 to %u", f.path().c_str(), a.c_str(),
                           static_cast<unsigned long long>(window), 1u << 24)};
  }
  c.sliding_window = static_cast<int>(window);
  if (spec.swa_rope) {
    KAIRO_TRY_ASSIGN(const double base, f.get_float_or(a + ".rope.freq_base_swa", 10000.0));
    if (!(base > 1.0)) {
      return Error{strprintf("%s: %s.rope.freq_base_swa is %g, expected a value > 1", f.path().c_str(), a.c_str(),
                             base)};
    }
    c.rope_swa.freq_base = static_cast<float>(base);
    c.rope_swa.freq_scale = 1.0f;
  }
  return {};
}

// An embedding model's pooling. Its attention must be causal (the kernels' only kind): a bidirectional encoder's
// vectors would come out wrong, so such a file is refused rather than served.
Status read_pooling(const gguf::File& f, const std::string& a, ModelConfig& c) {
  KAIRO_TRY_ASSIGN(const uint64_t pooling, f.get_uint_or(a + ".pooling_type", 0));
  if (pooling > static_cast<uint64_t>(Pooling::Last)) {
    return Error{strprintf("%s: %s.pooling_type is %llu; kairo pools embeddings by none (0), mean (1), cls (2) or "
                           "last (3) (rank, 4, is a reranker's: not supported)",
                           f.path().c_str(), a.c_str(), static_cast<unsigned long long>(pooling))};
  }
  c.pooling = static_cast<Pooling>(pooling);
  KAIRO_TRY_ASSIGN(const bool causal, f.get_bool_or(a + ".attention.causal", true));
  if (!causal) {
    return Error{strprintf("%s: %s.attention.causal is false (a bidirectional encoder); kairo's attention is causal "
                           "only, so its embeddings would be wrong: serve this model with an encoder runtime",
                           f.path().c_str(), a.c_str())};
  }
  return Status::success();
}

}  // namespace

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::None: return "none";
    case Pooling::Mean: return "mean";
    case Pooling::Cls: return "cls";
    case Pooling::Last: return "last";
  }
  return "none";
}

std::string describe_shape(const ModelConfig& c) {
  std::string s = strprintf("%d layers, dim %d, %d heads (%d KV, head dim %d), ffn %d", c.n_layers, c.dim, c.n_heads,
                            c.n_kv_heads, c.head_dim, c.ffn_dim);
  if (c.moe()) s += strprintf(", %d experts (%d used, width %d)", c.n_experts, c.n_experts_used, c.expert_ffn_dim);
  s += strprintf(", vocab %d, context %d, rope %s base %g", c.n_vocab, c.context_length,
                 c.rope.style == kernels::RopeStyle::Neox ? "NEOX" : "normal", c.rope.freq_base);
  if (c.rope.freq_scale != 1.0f) s += strprintf(" (linear scaling x%g)", 1.0 / c.rope.freq_scale);
  if (!c.yarn_freq_factors.empty()) s += strprintf(" (YaRN, magnitude x%g)", c.rope.mscale);
  else if (c.rope.mscale != 1.0f) s += strprintf(" (magnitude x%g)", c.rope.mscale);
  if (c.qkv_bias) s += ", QKV bias";
  if (c.qk_norm) s += ", Q/K norm";
  if (c.sliding_window > 0) {
    s += strprintf(", sliding window %d on %d of every %d layers", c.sliding_window, c.swa_pattern - 1,
                   c.swa_pattern);
    if (c.rope_swa.freq_base != c.rope.freq_base) s += strprintf(" (rope base %g)", c.rope_swa.freq_base);
  }
  if (c.attn_softcap > 0) s += strprintf(", attention softcap %g", c.attn_softcap);
  if (c.final_softcap > 0) s += strprintf(", final softcap %g", c.final_softcap);
  if (c.tied_embeddings) s += ", tied embeddings";
  if (c.pooling != Pooling::None) s += strprintf(", embeddings by %s pooling", pooling_name(c.pooling));
  return s;
}

Result<ModelConfig> read_config(const gguf::File& f) {
  ModelConfig c;
  KAIRO_TRY_ASSIGN(c.arch, f.get_string("general.architecture"));
  const ArchSpec* spec = find_arch(c.arch);
  if (!spec) {
    return Error{strprintf("%s: architecture '%s' is not supported (supported: %s)", f.path().c_str(),
                           c.arch.c_str(), join(supported_arch_names()).c_str())};
  }
  KAIRO_TRY_ASSIGN(c.name, f.get_string_or("general.name", ""));
  const std::string& a = c.arch;
  constexpr uint64_t kMaxDim = 1u << 20;
  KAIRO_TRY_ASSIGN(c.n_layers, read_positive(f, a + ".block_count", 4096));
  KAIRO_TRY_ASSIGN(c.dim, read_positive(f, a + ".embedding_length", kMaxDim));
  KAIRO_TRY_ASSIGN(c.n_heads, read_positive(f, a + ".attention.head_count", 4096));
  KAIRO_TRY_ASSIGN(const uint64_t n_kv, f.get_uint_or(a + ".attention.head_count_kv", c.n_heads));
  if (n_kv == 0 || n_kv > static_cast<uint64_t>(c.n_heads) || c.n_heads % n_kv != 0) {
    return Error{strprintf("%s: %s.attention.head_count_kv is %llu; it must divide head_count (%d)", f.path().c_str(),
                           a.c_str(), static_cast<unsigned long long>(n_kv), c.n_heads)};
  }
  c.n_kv_heads = static_cast<int>(n_kv);
  KAIRO_TRY_ASSIGN(const uint64_t head_dim, f.get_uint_or(a + ".attention.key_length", c.dim / c.n_heads));
  KAIRO_TRY_ASSIGN(const uint64_t v_dim, f.get_uint_or(a + ".attention.value_length", head_dim));
  if (head_dim == 0 || head_dim > 1024 || head_dim % 2 != 0 || v_dim != head_dim) {
    return Error{strprintf("%s: head size %llu (value size %llu) is not supported; expected an even size up to 1024 "
                           "with equal key and value sizes",
                           f.path().c_str(), static_cast<unsigned long long>(head_dim),
                           static_cast<unsigned long long>(v_dim))};
  }
  c.head_dim = static_cast<int>(head_dim);
  KAIRO_TRY_ASSIGN(c.ffn_dim, read_positive(f, a + ".feed_forward_length", kMaxDim * 4));
  KAIRO_TRY_ASSIGN(c.context_length, read_positive(f, a + ".context_length", 1u << 24));
  KAIRO_TRY_ASSIGN(const double eps, f.get_float_or(a + ".attention.layer_norm_rms_epsilon", 1e-5));
  if (!(eps > 0.0) || eps > 1.0) {
    return Error{strprintf("%s: %s.attention.layer_norm_rms_epsilon is %g, expected a small positive number",
                           f.path().c_str(), a.c_str(), eps)};
  }
  c.rms_eps = static_cast<float>(eps);

  c.rope.style = spec->rope_style;
  c.rope.n_heads = c.n_heads;
  c.rope.head_dim = c.head_dim;
  KAIRO_TRY_ASSIGN(const uint64_t n_rot, f.get_uint_or(a + ".rope.dimension_count", c.head_dim));
  if (n_rot == 0 || n_rot > head_dim || n_rot % 2 != 0) {
    return Error{strprintf("%s: %s.rope.dimension_count is %llu, expected an even number up to the head size %d",
                           f.path().c_str(), a.c_str(), static_cast<unsigned long long>(n_rot), c.head_dim)};
  }
  c.rope.n_rot = static_cast<int>(n_rot);
  KAIRO_TRY_ASSIGN(const double base, f.get_float_or(a + ".rope.freq_base", spec->default_rope_base));
  if (!(base > 1.0)) {
    return Error{strprintf("%s: %s.rope.freq_base is %g, expected a value > 1", f.path().c_str(), a.c_str(), base)};
  }
  c.rope.freq_base = static_cast<float>(base);
  KAIRO_TRY_STATUS(read_rope_scaling(f, a, c));
  apply_arch_traits(c);
  KAIRO_TRY_STATUS(read_experts(f, *spec, c));
  KAIRO_TRY_STATUS(read_gemma_extras(f, *spec, c));

  // The vocabulary size comes from the embedding table (the tokenizer must agree, checked by the loader).
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) return Error{strprintf("%s: tensor 'token_embd.weight' is missing", f.path().c_str())};
  if (embd->dims.size() != 2 || embd->dims[0] != c.dim || embd->dims[1] > (1 << 24)) {
    return Error{strprintf("%s: tensor 'token_embd.weight' should be [%d, n_vocab]", f.path().c_str(), c.dim)};
  }
  c.n_vocab = static_cast<int>(embd->dims[1]);
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  KAIRO_TRY_STATUS(read_pooling(f, a, c));
  return c;
}

}  // namespace kairo::model
