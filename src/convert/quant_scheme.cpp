#include "convert/quant_scheme.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <tuple>

#include "core/format.h"

namespace kairo::convert {
namespace {

struct SchemeEntry {
  const char* name;
  FileType file_type;
  DType base;
};

constexpr SchemeEntry kSchemes[] = {
    {"F32", FileType::AllF32, DType::F32},    {"F16", FileType::F16, DType::F16},
    {"BF16", FileType::BF16, DType::BF16},    {"Q8_0", FileType::Q8_0, DType::Q8_0},
    {"Q4_0", FileType::Q4_0, DType::Q4_0},    {"Q4_1", FileType::Q4_1, DType::Q4_1},
    {"Q5_0", FileType::Q5_0, DType::Q5_0},    {"Q5_1", FileType::Q5_1, DType::Q5_1},
    {"Q6_K", FileType::Q6_K, DType::Q6_K},    {"Q4_K_S", FileType::Q4_K_S, DType::Q4_K},
    {"Q4_K_M", FileType::Q4_K_M, DType::Q4_K}, {"Q5_K_S", FileType::Q5_K_S, DType::Q5_K},
    {"Q5_K_M", FileType::Q5_K_M, DType::Q5_K}, {"MXFP4_MOE", FileType::MXFP4_MOE, DType::MXFP4},
};

bool is_quantized(DType t) { return dtype_info(t).block_size > 1; }

// Tensor roles the rules distinguish (llama.cpp matches them by name fragments in the same way).
enum class Role { TokenEmbd, Output, AttnV, AttnQkv, AttnK, AttnQ, AttnOutput, FfnDown, FfnGate, FfnUp, Other };

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

Role role_of(const std::string& name) {
  if (name == "output.weight") return Role::Output;
  if (name == "token_embd.weight") return Role::TokenEmbd;
  if (contains(name, "attn_v.weight") || contains(name, "attn_kv_b.weight")) return Role::AttnV;
  if (contains(name, "attn_qkv.weight")) return Role::AttnQkv;
  if (contains(name, "attn_k.weight")) return Role::AttnK;
  if (contains(name, "attn_q.weight")) return Role::AttnQ;
  if (contains(name, "attn_output.weight")) return Role::AttnOutput;
  if (contains(name, "ffn_down")) return Role::FfnDown;
  if (contains(name, "ffn_gate")) return Role::FfnGate;
  if (contains(name, "ffn_up")) return Role::FfnUp;
  return Role::Other;
}

// Block index of "blk.N.*", -1 for tensors outside the blocks.
int layer_of(const std::string& name) {
  int layer = -1;
  if (std::sscanf(name.c_str(), "blk.%d.", &layer) != 1) return -1;
  return layer;
}

int n_dims(const std::vector<int64_t>& dims) {
  int n = static_cast<int>(dims.size());
  while (n > 1 && dims[static_cast<size_t>(n - 1)] == 1) --n;  // as ggml_n_dims: trailing 1s do not count
  return n;
}

// Layers that get more bits in the _M mixes: the first and last eighth, and every third one in between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

struct MixState {
  int n_attention_wv = 0;
  int i_attention_wv = 0;
  int i_ffn_down = 0;
  bool has_output = false;
};

DType mix_rule(DType t, const TensorDesc& tensor, Role role, FileType ft, const ModelFacts& m, MixState& s) {
  const bool falcon = m.arch == "falcon";
  if (role == Role::Output || (!s.has_output && role == Role::TokenEmbd)) {
    const int64_t nx = tensor.dims[0];
    if (falcon || nx % dtype_info(t).block_size != 0) return DType::Q8_0;
    return t != DType::Q8_0 ? DType::Q6_K : t;
  }
  if (role == Role::AttnV) {
    if ((ft == FileType::Q4_K_M || ft == FileType::Q5_K_M) && use_more_bits(s.i_attention_wv, s.n_attention_wv)) {
      t = DType::Q6_K;
    } else if (ft == FileType::Q4_K_S && s.i_attention_wv < 4) {
      t = DType::Q5_K;
    }
    // llama.cpp's LLM_TYPE_70B: 8 query heads share each attn_v, so more bits there cost little.
    const bool is_70b = m.arch == "llama" && m.n_layers == 80 && m.n_heads != m.n_kv_heads;
    if (is_70b && t == DType::Q4_K) t = DType::Q5_K;
    ++s.i_attention_wv;
    return t;
  }
  if (role == Role::FfnDown) {
    const int i = s.i_ffn_down, n = m.n_layers;
    if (ft == FileType::Q4_K_M) {
      if (falcon) {
        t = i < n / 16 ? DType::Q6_K : use_more_bits(i, n) ? DType::Q5_K : DType::Q4_K;
      } else if (use_more_bits(i, n)) {
        t = DType::Q6_K;
      }
    } else if (ft == FileType::Q5_K_M && use_more_bits(i, n)) {
      t = DType::Q6_K;
    } else if (ft == FileType::Q4_K_S && !falcon && i < n / 8) {
      t = DType::Q5_K;
    }
    ++s.i_ffn_down;
    return t;
  }
  if (role == Role::AttnQkv) {
    if (ft == FileType::Q4_K_M) return DType::Q5_K;
    if (ft == FileType::Q5_K_M) return DType::Q6_K;
  }
  return t;
}

// A row must be a whole number of blocks; llama.cpp's fallbacks when it is not.
DType shape_fallback(DType t, int64_t nx) {
  if (nx % dtype_info(t).block_size == 0) return t;
  switch (t) {
    case DType::Q4_K: t = DType::Q5_0; break;
    case DType::Q5_K: t = DType::Q5_1; break;
    case DType::Q6_K: t = DType::Q8_0; break;
    default: t = DType::F16; break;
  }
  return nx % dtype_info(t).block_size == 0 ? t : DType::F16;
}

}  // namespace

Result<QuantScheme> parse_quant_scheme(const std::string& name) {
  std::string key;
  for (char c : name) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (key == "Q4_K") key = "Q4_K_M";
  if (key == "Q5_K") key = "Q5_K_M";
  for (const auto& s : kSchemes) {
    if (key == s.name) return QuantScheme{s.name, s.file_type, s.base};
  }
  return Error{strprintf("unknown type %s; use one of %s", quote_for_error(name).c_str(),
                         quant_scheme_names().c_str())};
}

std::string quant_scheme_names() {
  std::string out;
  for (const auto& s : kSchemes) out += std::string(out.empty() ? "" : ", ") + s.name;
  return out + " (Q4_K, Q5_K: aliases for Q4_K_M, Q5_K_M)";
}

std::vector<size_t> quantize_order(const std::vector<TensorDesc>& tensors) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(layer_of(tensors[a].name), std::cref(tensors[a].name)) <
           std::make_tuple(layer_of(tensors[b].name), std::cref(tensors[b].name));
  });
  return order;
}

bool tensor_allows_quantization(const TensorDesc& t) {
  if (n_dims(t.dims) < 2) return false;
  const std::string& n = t.name;
  if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  for (const char* never : {"_norm.weight", "ffn_gate_inp.weight", "position_embd.weight", "token_types.weight",
                            "ssm_conv1d", "attn_rel_b.weight", "time_mix_"}) {
    if (contains(n, never)) return false;
  }
  return true;
}

std::vector<DType> choose_tensor_types(const std::vector<TensorDesc>& tensors, const QuantScheme& scheme,
                                       const ModelFacts& facts, bool pure) {
  MixState state;
  for (const auto& t : tensors) {
    const Role r = role_of(t.name);
    if (r == Role::AttnV || r == Role::AttnQkv) ++state.n_attention_wv;
    if (r == Role::Output) state.has_output = true;
  }
  std::vector<DType> out(tensors.size());
  for (size_t idx : quantize_order(tensors)) {
    const TensorDesc& t = tensors[idx];
    if (!tensor_allows_quantization(t)) {
      out[idx] = t.type;
      continue;
    }
    DType type = scheme.base;
    if (scheme.file_type == FileType::MXFP4_MOE) {
      // llama.cpp's rule for this ftype, ahead of every mix rule: the stacks of experts (a third dimension > 1)
      // get MXFP4, every other matrix Q8_0.
      type = t.dims.size() > 2 && t.dims[2] > 1 ? DType::MXFP4 : DType::Q8_0;
      out[idx] = shape_fallback(type, t.dims[0]);
      continue;
    }
    if (is_quantized(type)) {
      if (!pure) type = mix_rule(type, t, role_of(t.name), scheme.file_type, facts, state);
      type = shape_fallback(type, t.dims[0]);
    }
    out[idx] = type;
  }
  return out;
}

}  // namespace kairo::convert
