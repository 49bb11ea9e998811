#include "convert/lora/merge_adapter.h"

#include <cmath>
#include <map>

#include "convert/row_encoder.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "model/config.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace kairo::convert {
namespace {

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The merged tensor is written in the base tensor's type: kairo must be able to read it and to encode it.
Status check_reencodable(const std::string& base_path, const gguf::TensorInfo& t) {
  if (dtype_info(t.type).supported && can_quantize_to(t.type)) return {};
  return Error{strprintf("%s: tensor '%s' is %s, which kairo cannot re-encode after adding the adapter; merge into a "
                         "base of F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K or MXFP4 weights "
                         "(an F16 base, then `kairo quantize`, gives any type)", base_path.c_str(), t.name.c_str(),
                         std::string(dtype_name(t.type)).c_str())};
}

}  // namespace

void merge_row(const model::lora::LoraWeight& w, int64_t row, const float* base_row, float* out) {
  thread_local std::vector<float> acc;
  acc.assign(static_cast<size_t>(w.n_in), 0.0f);
  const float* b_row = w.b.data() + row * w.rank;
  for (int k = 0; k < w.rank; ++k) {
    const float bk = b_row[k];
    const float* a_row = w.a.data() + static_cast<int64_t>(k) * w.n_in;
    for (int64_t i = 0; i < w.n_in; ++i) acc[i] += bk * a_row[i];
  }
  for (int64_t i = 0; i < w.n_in; ++i) out[i] = base_row[i] + w.scale * acc[i];
}

Result<MergeReport> merge_adapter(const std::string& base_path, const std::string& adapter_path,
                                  const std::string& out_path, const MergeOptions& options, ThreadPool& pool,
                                  const MergeProgress& on_tensor) {
  if (out_path == base_path || out_path == adapter_path) {
    return Error{strprintf("the output %s is one of the inputs; write to another file",
                           quote_for_error(out_path).c_str())};
  }
  if (!std::isfinite(options.scale)) return Error{"--scale must be a finite number"};
  KAIRO_TRY_ASSIGN(const gguf::File base, gguf::File::open(base_path));
  KAIRO_TRY_ASSIGN(const model::ModelConfig config, model::read_config(base));
  model::lora::LoadOptions load;
  load.scale = options.scale;
  load.max_rank = options.max_rank;
  KAIRO_TRY_ASSIGN(const model::lora::Adapter adapter, model::lora::load_adapter(adapter_path, base, config, load));

  std::map<std::string, const model::lora::LoraWeight*> by_name;
  for (const model::lora::LoraWeight& w : adapter.weights) {
    if (w.scale == 0.0f) continue;  // no change: copied byte for byte
    by_name.emplace(w.base_name, &w);
    KAIRO_TRY_STATUS(check_reencodable(base_path, *base.find_tensor(w.base_name)));
  }

  gguf::Writer writer(static_cast<uint32_t>(base.alignment()));
  for (const auto& [key, value] : base.metadata()) {
    if (key != "general.alignment") writer.set(key, value);  // the alignment is the Writer's own
  }
  writer.set("kairo.lora.merged_adapter",
             gguf::Value::string(adapter.name.empty() ? file_name(adapter_path) : adapter.name));
  writer.set("kairo.lora.merged_scale", gguf::Value::f32(options.scale));
  for (const gguf::TensorInfo& t : base.tensors()) writer.add_tensor_info(t.name, t.type, t.dims);

  MergeReport report;
  report.ignored = adapter.ignored;
  KAIRO_TRY_ASSIGN(gguf::TensorStream stream, writer.open_stream(out_path));
  const size_t n = base.tensors().size();
  for (size_t idx = 0; idx < n; ++idx) {
    const gguf::TensorInfo& t = base.tensors()[idx];
    if (on_tensor) on_tensor(t.name, idx, n);
    const auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      KAIRO_TRY_STATUS(stream.write(t.data, t.n_bytes));
      ++report.n_copied;
      continue;
    }
    const model::lora::LoraWeight& w = *it->second;
    const int64_t n_cols = t.dims[0];
    const size_t in_row_bytes = row_bytes(t.type, n_cols);
    KAIRO_TRY_STATUS(stream_rows(stream, t.type, n_cols, t.n_rows(),
                                 [&](int64_t row, float* out) {
                                   dequantize_row(t.type, t.data + static_cast<size_t>(row) * in_row_bytes, out,
                                                  n_cols);
                                   merge_row(w, row, out, out);
                                 },
                                 pool));
    report.merged.push_back({t.name, t.type, w.rank, w.scale});
  }
  KAIRO_TRY_STATUS(stream.finish());
  KAIRO_TRY_ASSIGN(const gguf::File out, gguf::File::open(out_path));  // proves the file reads back
  report.out_bytes = out.file_size();
  return report;
}

}  // namespace kairo::convert
