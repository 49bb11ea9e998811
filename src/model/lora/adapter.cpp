#include "model/lora/adapter.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.h"
#include "tensor/dequant.h"

namespace kairo::model::lora {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_adapter_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Q8_0; }

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

struct Pair {
  const gguf::TensorInfo* a = nullptr;
  const gguf::TensorInfo* b = nullptr;
};

Status check_metadata(const gguf::File& file, const gguf::File& base, const ModelConfig& base_config) {
  const std::string& path = file.path();
  KAIRO_TRY_ASSIGN(const std::string general_type, file.get_string_or(std::string(kGeneralTypeKey), ""));
  if (general_type != kGeneralTypeAdapter) {
    const std::string found =
        general_type.empty() ? "missing" : quote_for_error(general_type) + ", not \"adapter\"";
    return Error{strprintf("%s: general.type is %s: this is not a LoRA adapter file (convert one with llama.cpp's "
                           "convert_lora_to_gguf.py, or make one with `kairo lora synth`)", path.c_str(), found.c_str())};
  }
  KAIRO_TRY_ASSIGN(const std::string adapter_type, file.get_string_or(std::string(kAdapterTypeKey), ""));
  if (adapter_type != kAdapterTypeLora) {
    return Error{strprintf("%s: adapter.type is %s; kairo reads LoRA adapters only (adapter.type = \"lora\")",
                           path.c_str(), adapter_type.empty() ? "missing" : quote_for_error(adapter_type).c_str())};
  }
  KAIRO_TRY_ASSIGN(const std::string arch, file.get_string_or("general.architecture", ""));
  if (arch != base_config.arch) {
    return Error{strprintf("%s: the adapter is for %s models but the base model %s is %s; use an adapter made for "
                           "this base model", path.c_str(),
                           arch.empty() ? "(general.architecture missing)" : quote_for_error(arch).c_str(),
                           base.path().c_str(), base_config.arch.c_str())};
  }
  return {};
}

// Groups the file's tensors into pairs by base name (file order of first appearance); anything else is an error,
// except the norm vectors llama.cpp skips too.
Result<std::vector<std::pair<std::string, Pair>>> pair_tensors(const gguf::File& file, Adapter& out) {
  const std::string& path = file.path();
  std::vector<std::pair<std::string, Pair>> pairs;
  std::map<std::string, size_t> index;
  for (const gguf::TensorInfo& t : file.tensors()) {
    const bool is_a = ends_with(t.name, kSuffixA), is_b = ends_with(t.name, kSuffixB);
    if (!is_a && !is_b) {
      if (ends_with(t.name, "_norm.weight")) {
        out.ignored.push_back(t.name);
        continue;
      }
      return Error{strprintf("%s: tensor '%s' is neither a .lora_a nor a .lora_b tensor; a LoRA adapter holds "
                             "<base tensor>.lora_a / <base tensor>.lora_b pairs only", path.c_str(), t.name.c_str())};
    }
    const std::string base_name = t.name.substr(0, t.name.size() - kSuffixA.size());
    auto [it, added] = index.emplace(base_name, pairs.size());
    if (added) pairs.push_back({base_name, {}});
    Pair& p = pairs[it->second].second;
    (is_a ? p.a : p.b) = &t;
  }
  for (const auto& [base_name, p] : pairs) {
    if (!p.a || !p.b) {
      return Error{strprintf("%s: tensor '%s%s' has no partner '%s%s'; every adapted tensor needs both lora_a and "
                             "lora_b", path.c_str(), base_name.c_str(), std::string(p.a ? kSuffixA : kSuffixB).c_str(),
                             base_name.c_str(), std::string(p.a ? kSuffixB : kSuffixA).c_str())};
    }
  }
  if (pairs.empty()) return Error{strprintf("%s: the adapter has no lora_a / lora_b tensors", path.c_str())};
  return pairs;
}

Status check_tensor_type(const std::string& path, const gguf::TensorInfo& t) {
  if (!is_adapter_type(t.type)) {
    return Error{strprintf("%s: tensor '%s' is %s; adapter tensors must be F32, F16, BF16 or Q8_0 (convert the "
                           "adapter with --outtype f16)", path.c_str(), t.name.c_str(),
                           std::string(dtype_name(t.type)).c_str())};
  }
  if (t.dims.size() != 2) {
    return Error{strprintf("%s: tensor '%s' has dims %s; LoRA tensors are matrices (2 dims)", path.c_str(),
                           t.name.c_str(), dims_text(t.dims).c_str())};
  }
  return {};
}

// Checks the pair's shapes against the base tensor [n_in, n_out]: lora_a [n_in, rank], lora_b [rank, n_out].
Status check_shapes(const std::string& path, const std::string& base_name, const gguf::TensorInfo& base_t,
                    const Pair& p, int max_rank) {
  const int64_t n_in = base_t.dims[0], n_out = base_t.dims[1];
  const gguf::TensorInfo& a = *p.a;
  const gguf::TensorInfo& b = *p.b;
  if (a.dims[0] != n_in) {
    // llama.cpp's old finetune example stored lora_a transposed; llama.cpp refuses those too.
    const std::string hint = a.dims[1] == n_in ? " (it is stored transposed, as llama.cpp's old finetune example "
                                                 "wrote it: re-convert the adapter with convert_lora_to_gguf.py)"
                                               : "";
    return Error{strprintf("%s: tensor '%s' has dims %s but its base tensor '%s' is %s: lora_a must be [%lld, rank]"
                           "%s", path.c_str(), a.name.c_str(), dims_text(a.dims).c_str(), base_name.c_str(),
                           dims_text(base_t.dims).c_str(), static_cast<long long>(n_in), hint.c_str())};
  }
  if (b.dims[1] != n_out) {
    return Error{strprintf("%s: tensor '%s' has dims %s but its base tensor '%s' is %s: lora_b must be [rank, %lld] "
                           "(is this adapter for another model?)", path.c_str(), b.name.c_str(),
                           dims_text(b.dims).c_str(), base_name.c_str(), dims_text(base_t.dims).c_str(),
                           static_cast<long long>(n_out))};
  }
  if (a.dims[1] != b.dims[0]) {
    return Error{strprintf("%s: the ranks of '%s' (%lld, dims %s) and '%s' (%lld, dims %s) differ; lora_a's dims[1] "
                           "and lora_b's dims[0] are the same rank", path.c_str(), a.name.c_str(),
                           static_cast<long long>(a.dims[1]), dims_text(a.dims).c_str(), b.name.c_str(),
                           static_cast<long long>(b.dims[0]), dims_text(b.dims).c_str())};
  }
  const int64_t rank = b.dims[0];
  if (rank < 1 || rank > max_rank) {
    return Error{strprintf("%s: '%s' has rank %lld; the rank must be 1 to %d (raise the limit with --max-lora-rank, "
                           "or merge a full-rank delta into the model with `kairo lora merge`)", path.c_str(),
                           base_name.c_str(), static_cast<long long>(rank), max_rank)};
  }
  return {};
}

// The tensor as f32, rows in file order; non-finite values are refused (they would poison every output).
Result<std::vector<float>> read_f32(const std::string& path, const gguf::TensorInfo& t) {
  const int64_t n_cols = t.dims[0], n_rows = t.dims[1];
  std::vector<float> out(static_cast<size_t>(n_cols * n_rows));
  const size_t in_row_bytes = row_bytes(t.type, n_cols);
  for (int64_t r = 0; r < n_rows; ++r) {
    dequantize_row(t.type, t.data + static_cast<size_t>(r) * in_row_bytes, out.data() + r * n_cols, n_cols);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      return Error{strprintf("%s: tensor '%s' holds a non-finite value (%g) at row %lld, column %lld", path.c_str(),
                             t.name.c_str(), out[i], static_cast<long long>(i / n_cols),
                             static_cast<long long>(i % n_cols))};
    }
  }
  return out;
}

}  // namespace

bool is_adaptable(const TensorEntry& e) {
  using S = TensorSlot;
  if (e.form != TensorForm::Matrix && e.form != TensorForm::Fused) return false;
  switch (e.slot) {
    case S::Q: case S::K: case S::V: case S::Qkv: case S::AttnOutput: case S::Gate: case S::Up: case S::GateUp:
    case S::Down:
      return true;
    default:
      return false;
  }
}

int Adapter::max_rank() const {
  int r = 0;
  for (const LoraWeight& w : weights) r = std::max(r, w.rank);
  return r;
}

uint64_t Adapter::n_params() const {
  uint64_t n = 0;
  for (const LoraWeight& w : weights) n += w.a.size() + w.b.size();
  return n;
}

const LoraWeight* Adapter::find(const std::string& base_name) const {
  for (const LoraWeight& w : weights) {
    if (w.base_name == base_name) return &w;
  }
  return nullptr;
}

Result<Adapter> read_adapter(const gguf::File& file, const gguf::File& base, const ModelConfig& base_config,
                             const LoadOptions& options) {
  const std::string& path = file.path();
  KAIRO_TRY_STATUS(check_metadata(file, base, base_config));
  Adapter out;
  out.path = path;
  out.arch = base_config.arch;
  KAIRO_TRY_ASSIGN(out.name, file.get_string_or("general.name", ""));
  KAIRO_TRY_ASSIGN(const double alpha, file.get_float_or(std::string(kAlphaKey), 0.0));
  if (!std::isfinite(alpha)) {
    return Error{strprintf("%s: adapter.lora.alpha is %g; it must be a finite number", path.c_str(), alpha)};
  }
  out.alpha = static_cast<float>(alpha);
  out.user_scale = options.scale;
  KAIRO_TRY_ASSIGN(const auto pairs, pair_tensors(file, out));

  std::map<std::string, const TensorEntry*> table;
  const std::vector<TensorEntry> entries = model_tensors(base_config);
  for (const TensorEntry& e : entries) table.emplace(e.name, &e);

  for (const auto& [base_name, p] : pairs) {
    const gguf::TensorInfo* base_t = base.find_tensor(base_name);
    const auto entry = table.find(base_name);
    if (!base_t) {
      return Error{strprintf("%s: tensor '%s%s' adapts '%s', which the base model %s does not have (is this adapter "
                             "for another model?)", path.c_str(), base_name.c_str(), std::string(kSuffixA).c_str(),
                             base_name.c_str(), base.path().c_str())};
    }
    if (entry == table.end() || !is_adaptable(*entry->second)) {
      const char* why = entry != table.end() && entry->second->form == TensorForm::Stack ? "mixture-of-experts expert tensors are not "
                                                                   "supported yet; "
                                                                 : "";
      return Error{strprintf("%s: tensor '%s' cannot be adapted: %skairo applies LoRA to the attention and dense "
                             "feed-forward projections (attn_q, attn_k, attn_v, attn_qkv, attn_output, ffn_gate, "
                             "ffn_up, ffn_down) only", path.c_str(), base_name.c_str(), why)};
    }
    KAIRO_TRY_STATUS(check_tensor_type(path, *p.a));
    KAIRO_TRY_STATUS(check_tensor_type(path, *p.b));
    KAIRO_TRY_STATUS(check_shapes(path, base_name, *base_t, p, options.max_rank));
    LoraWeight w;
    w.base_name = base_name;
    w.slot = entry->second->slot;
    w.layer = entry->second->layer;
    w.n_in = base_t->dims[0];
    w.n_out = base_t->dims[1];
    w.rank = static_cast<int>(p.b->dims[0]);
    w.a_type = p.a->type;
    w.b_type = p.b->type;
    KAIRO_TRY_ASSIGN(w.a, read_f32(path, *p.a));
    KAIRO_TRY_ASSIGN(w.b, read_f32(path, *p.b));
    w.scale = effective_scale(out.alpha, w.rank, options.scale);
    out.weights.push_back(std::move(w));
  }
  // Base-file order, so merge and later per-layer application walk the adapter the way they walk the model.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < base.tensors().size(); ++i) order.emplace(base.tensors()[i].name, i);
  std::sort(out.weights.begin(), out.weights.end(),
            [&](const LoraWeight& x, const LoraWeight& y) { return order[x.base_name] < order[y.base_name]; });
  return out;
}

Result<Adapter> load_adapter(const std::string& path, const gguf::File& base, const ModelConfig& base_config,
                             const LoadOptions& options) {
  KAIRO_TRY_ASSIGN(const gguf::File file, gguf::File::open(path));
  return read_adapter(file, base, base_config, options);
}

}  // namespace kairo::model::lora
