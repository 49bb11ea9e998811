#include "convert/lora/synth_adapter.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "convert/random_rows.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "model/lora/adapter.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace kairo::convert {
namespace {

using model::TensorSlot;

struct Target {
  const char* name;
  std::vector<TensorSlot> slots;  // the split projection, and the fused tensor that holds it
};

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = {
      {"q", {TensorSlot::Q, TensorSlot::Qkv}},       {"k", {TensorSlot::K, TensorSlot::Qkv}},
      {"v", {TensorSlot::V, TensorSlot::Qkv}},       {"o", {TensorSlot::AttnOutput}},
      {"gate", {TensorSlot::Gate, TensorSlot::GateUp}}, {"up", {TensorSlot::Up, TensorSlot::GateUp}},
      {"down", {TensorSlot::Down}},
  };
  return targets;
}

const Target* find_target(const std::string& name) {
  for (const Target& t : all_targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

// RMS of the tensor's weights over up to 64 evenly spaced rows (a floor where the base is all zeros or unreadable).
double weight_rms(const gguf::TensorInfo& t) {
  const int64_t n_cols = t.dims[0], n_rows = t.n_rows();
  const double floor_rms = 1.0 / std::sqrt(static_cast<double>(n_cols));
  if (!dtype_info(t.type).supported) return floor_rms;
  const int64_t n_sample = std::min<int64_t>(n_rows, 64);
  std::vector<float> row(static_cast<size_t>(n_cols));
  double sum_sq = 0;
  for (int64_t s = 0; s < n_sample; ++s) {
    const int64_t r = s * n_rows / n_sample;
    dequantize_row(t.type, t.data + static_cast<size_t>(r) * row_bytes(t.type, n_cols), row.data(), n_cols);
    for (float x : row) sum_sq += static_cast<double>(x) * x;
  }
  const double rms = std::sqrt(sum_sq / static_cast<double>(n_sample * n_cols));
  return rms > 0 && std::isfinite(rms) ? rms : floor_rms;
}

// Draws a [n_rows, n_cols] tensor row by row and encodes it; Q8_0 rows that do not split into blocks become F16.
void add_random_tensor(gguf::Writer& w, const std::string& name, int64_t n_cols, int64_t n_rows, float stddev,
                       uint64_t seed, DType type, AdapterSynthReport& report) {
  if (n_cols % dtype_info(type).block_size != 0) {
    type = DType::F16;
    report.f16_fallback.push_back(name);
  }
  const size_t out_row_bytes = row_bytes(type, n_cols);
  std::vector<uint8_t> bytes(out_row_bytes * static_cast<size_t>(n_rows));
  std::vector<float> row(static_cast<size_t>(n_cols));
  const uint64_t key = tensor_key(name);
  for (int64_t r = 0; r < n_rows; ++r) {
    normal_row(seed, key, r, stddev, row.data(), n_cols);
    quantize_row(type, row.data(), bytes.data() + static_cast<size_t>(r) * out_row_bytes, n_cols);
  }
  w.add_tensor(name, type, {n_cols, n_rows}, std::move(bytes));
  report.n_params += static_cast<uint64_t>(n_cols * n_rows);
}

Status check_options(const AdapterSynthOptions& o) {
  if (o.rank < 1 || o.rank > o.max_rank) {
    return Error{strprintf("--rank %d: the rank must be 1 to %d", o.rank, o.max_rank)};
  }
  if (o.type != DType::F32 && o.type != DType::F16 && o.type != DType::BF16 && o.type != DType::Q8_0) {
    return Error{strprintf("--type %s: adapter tensors are f32, f16, bf16 or q8_0",
                           std::string(dtype_name(o.type)).c_str())};
  }
  if (o.alpha && !std::isfinite(*o.alpha)) return Error{"--alpha must be a finite number"};
  if (!(o.strength >= 0.0f) || !std::isfinite(o.strength)) return Error{"--strength must be 0 or more"};
  for (const std::string& t : o.targets) {
    if (!find_target(t)) {
      return Error{strprintf("--targets: unknown projection %s; use q, k, v, o, gate, up, down",
                             quote_for_error(t).c_str())};
    }
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> parse_lora_targets(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    const size_t comma = std::min(csv.find(',', start), csv.size());
    const std::string t = csv.substr(start, comma - start);
    if (!find_target(t)) {
      return Error{strprintf("--targets: unknown projection %s; use a comma-separated list of q, k, v, o, gate, "
                             "up, down", quote_for_error(t).c_str())};
    }
    out.push_back(t);
    start = comma + 1;
  }
  return out;
}

Result<AdapterSynthReport> write_synth_adapter(const std::string& base_path, const std::string& out_path,
                                               const AdapterSynthOptions& options) {
  KAIRO_TRY_STATUS(check_options(options));
  if (out_path == base_path) {
    return Error{strprintf("the output %s is the base model; write to another file",
                           quote_for_error(out_path).c_str())};
  }
  KAIRO_TRY_ASSIGN(const gguf::File base, gguf::File::open(base_path));
  KAIRO_TRY_ASSIGN(const model::ModelConfig config, model::read_config(base));
  KAIRO_TRY_ASSIGN(const std::string base_name, base.get_string_or("general.name", ""));

  // The slots asked for; each named target must exist in this base.
  std::vector<std::string> targets = options.targets;
  const bool all = targets.empty();
  if (all) {
    for (const Target& t : all_targets()) targets.push_back(t.name);
  }
  const std::vector<model::TensorEntry> entries = model::model_tensors(config);
  std::set<TensorSlot> slots;
  for (const std::string& name : targets) {
    const Target& t = *find_target(name);
    bool found = false;
    for (const model::TensorEntry& e : entries) {
      const bool match = std::find(t.slots.begin(), t.slots.end(), e.slot) != t.slots.end();
      if (match && model::lora::is_adaptable(e)) {
        slots.insert(e.slot);
        found = true;
      }
    }
    if (!found && !all) {
      return Error{strprintf("--targets %s: the base model %s has no such projection%s", name.c_str(),
                             base_path.c_str(), config.moe() ? " (its feed-forward is a mixture of experts, which "
                                                               "adapters cannot target yet)" : "")};
    }
  }
  if (slots.empty()) return Error{strprintf("the base model %s has no projection to adapt", base_path.c_str())};

  AdapterSynthReport report;
  report.alpha = options.alpha.value_or(static_cast<float>(options.rank));
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string(config.arch));
  w.set(std::string(model::lora::kGeneralTypeKey), gguf::Value::string(std::string(model::lora::kGeneralTypeAdapter)));
  w.set("general.name", gguf::Value::string(strprintf("synthetic LoRA rank %d for %s", options.rank,
                                                      base_name.empty() ? config.arch.c_str() : base_name.c_str())));
  w.set(std::string(model::lora::kAdapterTypeKey), gguf::Value::string(std::string(model::lora::kAdapterTypeLora)));
  w.set(std::string(model::lora::kAlphaKey), gguf::Value::f32(report.alpha));
  w.set("kairo.lora.synth.seed", gguf::Value::uint(gguf::ValueType::UINT64, options.seed));
  w.set("kairo.lora.synth.strength", gguf::Value::f32(options.strength));

  const int64_t r = options.rank;
  const double scale = std::fabs(model::lora::effective_scale(report.alpha, options.rank, 1.0f));
  for (const model::TensorEntry& e : entries) {
    if (!slots.count(e.slot) || !model::lora::is_adaptable(e)) continue;
    const gguf::TensorInfo* t = base.find_tensor(e.name);
    if (!t || t->dims.size() != 2) {
      return Error{strprintf("%s: tensor '%s' is missing or not a matrix", base_path.c_str(), e.name.c_str())};
    }
    const int64_t n_in = t->dims[0], n_out = t->dims[1];
    // var(scale · (B·A)_oi) = scale^2 · r · sigma_a^2 · sigma_b^2 = (strength · rms)^2.
    const double sigma_a = 1.0 / std::sqrt(static_cast<double>(n_in));
    const double sigma_b = scale > 0 ? options.strength * weight_rms(*t) / (scale * std::sqrt(double(r)) * sigma_a)
                                     : 0.0;
    add_random_tensor(w, e.name + std::string(model::lora::kSuffixA), n_in, r, static_cast<float>(sigma_a),
                      options.seed, options.type, report);
    add_random_tensor(w, e.name + std::string(model::lora::kSuffixB), r, n_out, static_cast<float>(sigma_b),
                      options.seed, options.type, report);
    report.adapted.push_back(e.name);
  }
  KAIRO_TRY_STATUS(w.write(out_path));

  model::lora::LoadOptions load;
  load.max_rank = options.max_rank;
  KAIRO_TRY_ASSIGN(const model::lora::Adapter check, model::lora::load_adapter(out_path, base, config, load));
  KAIRO_TRY_ASSIGN(const gguf::File out, gguf::File::open(out_path));
  report.n_bytes = out.file_size();
  return report;
}

}  // namespace kairo::convert
