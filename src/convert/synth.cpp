#include "convert/synth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "convert/random_rows.h"
#include "convert/row_encoder.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "model/arch/arch.h"
#include "plan/model_shapes.h"

namespace kairo::convert {
namespace {

constexpr uint32_t kQuantizationVersion = 2;
constexpr int32_t kTokenTypeUnused = 5;  // GGUF token type UNUSED: never produced by encoding, never rendered

Status validate_shape(const model::ModelConfig& c) {
  const model::ArchSpec* spec = model::find_arch(c.arch);
  if (!spec) {
    std::string names;
    for (const std::string& n : model::supported_arch_names()) names += (names.empty() ? "" : ", ") + n;
    return Error{strprintf("--arch %s is not supported; use one of %s", quote_for_error(c.arch).c_str(),
                           names.c_str())};
  }
  if (spec->experts == model::ArchSpec::Experts::Required && !c.moe()) {
    return Error{strprintf("a %s model is a mixture of experts: give --experts, --experts-used and --expert-ffn",
                           c.arch.c_str())};
  }
  if (spec->experts == model::ArchSpec::Experts::None && c.moe()) {
    return Error{strprintf("--experts: %s is a dense architecture (mixtures of experts: llama, qwen3moe)",
                           c.arch.c_str())};
  }
  if (spec->swa_pattern > 0 && c.sliding_window <= 0) {
    return Error{strprintf("a %s model has sliding-window layers: give --sliding-window", c.arch.c_str())};
  }
  if (c.moe() && (c.n_experts_used <= 0 || c.n_experts_used > c.n_experts || c.expert_ffn_dim <= 0)) {
    return Error{strprintf("--experts-used %d must be 1 to --experts %d, and --expert-ffn (%d) positive",
                           c.n_experts_used, c.n_experts, c.expert_ffn_dim)};
  }
  if (c.n_layers <= 0 || c.dim <= 0 || c.n_heads <= 0 || c.ffn_dim <= 0 || c.n_vocab <= 0 || c.context_length <= 0) {
    return Error{"--layers, --dim, --heads, --ffn, --vocab and --context must all be positive"};
  }
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0) {
    return Error{strprintf("--kv-heads %d must divide --heads %d", c.n_kv_heads, c.n_heads)};
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0 || c.head_dim > 1024) {
    return Error{strprintf("the head size is %d; it must be even and at most 1024 (--dim / --heads, or --head-dim)",
                           c.head_dim)};
  }
  return {};
}

struct TokenizerCopy {
  std::vector<std::pair<std::string, gguf::Value>> kv;
  int n_tokens = 0;
};

// Every tokenizer.* key of the source, with the per-token arrays padded to n_vocab.
Result<TokenizerCopy> read_tokenizer(const std::string& path) {
  KAIRO_TRY_ASSIGN(const gguf::File f, gguf::File::open(path));
  const gguf::Value* tokens = f.find("tokenizer.ggml.tokens");
  if (!tokens || tokens->type() != gguf::ValueType::ARRAY || tokens->items().empty()) {
    return Error{strprintf("%s has no tokenizer (no tokenizer.ggml.tokens); pass --tokenizer-from another GGUF, or "
                           "--tokenizer-from none", path.c_str())};
  }
  TokenizerCopy out;
  out.n_tokens = static_cast<int>(tokens->items().size());
  for (const auto& [key, value] : f.metadata()) {
    if (key.rfind("tokenizer.", 0) == 0) out.kv.emplace_back(key, value);
  }
  return out;
}

// The array padded to n items with `make(elem_type, index)`; arrays of an unexpected element type are refused.
Result<gguf::Value> padded(const std::string& key, const gguf::Value& v, size_t n, bool (*fits)(gguf::ValueType),
                           const std::function<gguf::Value(gguf::ValueType, size_t)>& make) {
  if (v.type() != gguf::ValueType::ARRAY || !fits(v.elem_type())) {
    return Error{strprintf("the tokenizer's '%s' is not an array of the expected type", key.c_str())};
  }
  if (v.items().size() >= n) return v;
  std::vector<gguf::Value> items = v.items();
  for (size_t i = items.size(); i < n; ++i) items.push_back(make(v.elem_type(), i));
  return gguf::Value::array(v.elem_type(), std::move(items));
}

bool is_string(gguf::ValueType t) { return t == gguf::ValueType::STRING; }
bool is_real(gguf::ValueType t) { return t == gguf::ValueType::FLOAT32 || t == gguf::ValueType::FLOAT64; }
bool is_int(gguf::ValueType t) {
  return t == gguf::ValueType::INT8 || t == gguf::ValueType::INT16 || t == gguf::ValueType::INT32 ||
         t == gguf::ValueType::INT64 || t == gguf::ValueType::UINT8 || t == gguf::ValueType::UINT16 ||
         t == gguf::ValueType::UINT32 || t == gguf::ValueType::UINT64;
}

// Tokenizer metadata for n_vocab tokens: per-token arrays get unused "<dummy_N>" tokens at the end.
Status copy_tokenizer(gguf::Writer& w, const TokenizerCopy& tok, size_t n_vocab) {
  for (const auto& [key, value] : tok.kv) {
    if (key == "tokenizer.ggml.tokens") {
      KAIRO_TRY_ASSIGN(gguf::Value v, padded(key, value, n_vocab, is_string, [](gguf::ValueType, size_t i) {
                         return gguf::Value::string("<dummy_" + std::to_string(i) + ">");
                       }));
      w.set(key, std::move(v));
    } else if (key == "tokenizer.ggml.scores") {
      KAIRO_TRY_ASSIGN(gguf::Value v, padded(key, value, n_vocab, is_real, [](gguf::ValueType t, size_t) {
                         return gguf::Value::real(t, 0.0);
                       }));
      w.set(key, std::move(v));
    } else if (key == "tokenizer.ggml.token_type") {
      KAIRO_TRY_ASSIGN(gguf::Value v, padded(key, value, n_vocab, is_int, [](gguf::ValueType t, size_t) {
                         const bool is_signed = t == gguf::ValueType::INT8 || t == gguf::ValueType::INT16 ||
                                                t == gguf::ValueType::INT32 || t == gguf::ValueType::INT64;
                         return is_signed ? gguf::Value::sint(t, kTokenTypeUnused)
                                          : gguf::Value::uint(t, kTokenTypeUnused);
                       }));
      w.set(key, std::move(v));
    } else {
      w.set(key, value);
    }
  }
  return {};
}

void set_model_metadata(gguf::Writer& w, const SynthOptions& o, const model::ModelConfig& c) {
  const std::string& a = c.arch;
  w.set("general.architecture", gguf::Value::string(a));
  w.set("general.name", gguf::Value::string("synthetic " + (o.preset.empty() ? a : o.preset)));
  w.set(a + ".context_length", gguf::Value::u32(static_cast<uint32_t>(c.context_length)));
  w.set(a + ".embedding_length", gguf::Value::u32(static_cast<uint32_t>(c.dim)));
  w.set(a + ".block_count", gguf::Value::u32(static_cast<uint32_t>(c.n_layers)));
  w.set(a + ".feed_forward_length", gguf::Value::u32(static_cast<uint32_t>(c.ffn_dim)));
  w.set(a + ".attention.head_count", gguf::Value::u32(static_cast<uint32_t>(c.n_heads)));
  w.set(a + ".attention.head_count_kv", gguf::Value::u32(static_cast<uint32_t>(c.n_kv_heads)));
  if (c.head_dim != c.dim / c.n_heads || c.dim % c.n_heads != 0) {
    w.set(a + ".attention.key_length", gguf::Value::u32(static_cast<uint32_t>(c.head_dim)));
    w.set(a + ".attention.value_length", gguf::Value::u32(static_cast<uint32_t>(c.head_dim)));
  }
  w.set(a + ".rope.dimension_count", gguf::Value::u32(static_cast<uint32_t>(c.rope.n_rot > 0 ? c.rope.n_rot : c.head_dim)));
  w.set(a + ".rope.freq_base", gguf::Value::f32(c.rope.freq_base));
  w.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(c.rms_eps));
  w.set(a + ".vocab_size", gguf::Value::u32(static_cast<uint32_t>(c.n_vocab)));
  if (c.sliding_window > 0) {
    w.set(a + ".attention.sliding_window", gguf::Value::u32(static_cast<uint32_t>(c.sliding_window)));
    if (c.rope_swa.freq_base != c.rope.freq_base) w.set(a + ".rope.freq_base_swa", gguf::Value::f32(c.rope_swa.freq_base));
  }
  if (c.rope.freq_scale != 1.0f) {
    w.set(a + ".rope.scaling.type", gguf::Value::string("linear"));
    w.set(a + ".rope.scaling.factor", gguf::Value::f32(1.0f / c.rope.freq_scale));
  }
  if (c.pooling != model::Pooling::None)
    w.set(a + ".pooling_type", gguf::Value::u32(static_cast<uint32_t>(c.pooling)));
  if (c.attn_softcap > 0) w.set(a + ".attn_logit_softcapping", gguf::Value::f32(c.attn_softcap));
  if (c.final_softcap > 0) w.set(a + ".final_logit_softcapping", gguf::Value::f32(c.final_softcap));
  if (c.moe()) {
    w.set(a + ".expert_count", gguf::Value::u32(static_cast<uint32_t>(c.n_experts)));
    w.set(a + ".expert_used_count", gguf::Value::u32(static_cast<uint32_t>(c.n_experts_used)));
    w.set(a + ".expert_feed_forward_length", gguf::Value::u32(static_cast<uint32_t>(c.expert_ffn_dim)));
  }
  w.set("kairo.synth.seed", gguf::Value::uint(gguf::ValueType::UINT64, o.seed));
  if (!o.preset.empty()) w.set("kairo.synth.preset", gguf::Value::string(o.preset));
}

}  // namespace

Result<SynthReport> write_synth_model(const SynthOptions& options, const std::string& out_path, ThreadPool& pool,
                                      const SynthProgress& on_tensor) {
  model::ModelConfig c = options.config;
  if (c.head_dim == 0 && c.n_heads > 0) c.head_dim = c.dim / c.n_heads;
  KAIRO_TRY_STATUS(validate_shape(c));
  if (!(options.init_std > 0.0f) || !std::isfinite(options.init_std)) return Error{"--init-std must be positive"};

  SynthReport report;
  TokenizerCopy tok;
  if (!options.tokenizer_path.empty()) {
    KAIRO_TRY_ASSIGN(tok, read_tokenizer(options.tokenizer_path));
    report.n_tokenizer_tokens = tok.n_tokens;
    c.n_vocab = std::max(c.n_vocab, tok.n_tokens);
    report.n_dummy_tokens = c.n_vocab - tok.n_tokens;
  }
  report.n_vocab = c.n_vocab;

  gguf::Writer w;
  set_model_metadata(w, options, c);
  KAIRO_TRY_STATUS(copy_tokenizer(w, tok, static_cast<size_t>(c.n_vocab)));
  // Last, in the order llama-quantize leaves them, so `kairo quantize` of the F32 file reproduces this file exactly.
  w.set("general.quantization_version", gguf::Value::u32(kQuantizationVersion));
  w.set("general.file_type", gguf::Value::u32(static_cast<uint32_t>(options.scheme.file_type)));

  const std::vector<plan::TensorSpec> specs = plan::standard_tensors(c, DType::F32);
  std::vector<TensorDesc> descs;
  for (const auto& s : specs) descs.push_back({s.name, s.dims, DType::F32});
  const ModelFacts facts{c.arch, c.n_layers, c.n_heads, c.n_kv_heads};
  const std::vector<DType> types = choose_tensor_types(descs, options.scheme, facts, options.pure);
  const std::vector<size_t> order = quantize_order(descs);
  for (size_t idx : order) {
    w.add_tensor_info(descs[idx].name, types[idx], descs[idx].dims);
    report.n_params += static_cast<uint64_t>(specs[idx].n_elements());
  }

  KAIRO_TRY_ASSIGN(gguf::TensorStream stream, w.open_stream(out_path));
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorDesc& d = descs[order[i]];
    const DType type = types[order[i]];
    if (on_tensor) on_tensor(d.name, type, i, order.size());
    const int64_t n_cols = d.dims[0];
    const int64_t n_rows = specs[order[i]].n_elements() / n_cols;
    const bool is_norm = d.name.find("_norm.weight") != std::string::npos;
    const uint64_t key = tensor_key(d.name);
    const uint64_t seed = options.seed;
    const float stddev = options.init_std;
    KAIRO_TRY_STATUS(stream_rows(stream, type, n_cols, n_rows,
                                 [&](int64_t row, float* out) {
                                   if (is_norm) {
                                     std::fill(out, out + n_cols, 1.0f);
                                   } else {
                                     normal_row(seed, key, row, stddev, out, n_cols);
                                   }
                                 },
                                 pool));
  }
  KAIRO_TRY_STATUS(stream.finish());
  KAIRO_TRY_ASSIGN(const gguf::File out, gguf::File::open(out_path));
  report.n_bytes = out.file_size();
  return report;
}

}  // namespace kairo::convert
