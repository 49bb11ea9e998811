#include "convert/quantize_model.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "convert/row_encoder.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace kairo::convert {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION: the block layouts kairo writes

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

Result<ModelFacts> read_facts(const gguf::File& f) {
  ModelFacts m;
  KAIRO_TRY_ASSIGN(m.arch, f.get_string_or("general.architecture", ""));
  // The layer count the position rules divide by; files without <arch>.block_count count their blocks.
  std::set<int> blocks;
  for (const auto& t : f.tensors()) {
    int layer = -1;
    if (std::sscanf(t.name.c_str(), "blk.%d.", &layer) == 1) blocks.insert(layer);
  }
  KAIRO_TRY_ASSIGN(const uint64_t n_layers, f.get_uint_or(m.arch + ".block_count", blocks.size()));
  KAIRO_TRY_ASSIGN(const uint64_t n_heads, f.get_uint_or(m.arch + ".attention.head_count", 0));
  KAIRO_TRY_ASSIGN(const uint64_t n_kv, f.get_uint_or(m.arch + ".attention.head_count_kv", n_heads));
  m.n_layers = static_cast<int>(std::min<uint64_t>(n_layers, 1u << 20));
  m.n_heads = static_cast<int>(std::min<uint64_t>(n_heads, 1u << 20));
  m.n_kv_heads = static_cast<int>(std::min<uint64_t>(n_kv, 1u << 20));
  return m;
}

Status check_convertible(const gguf::File& f, const gguf::TensorInfo& t, DType to, const QuantizeOptions& o) {
  if (t.type == to) return {};
  if (!dtype_info(t.type).supported) {
    return Error{strprintf("%s: tensor '%s' is %s, which kairo cannot read; it can only be copied, not converted "
                           "to %s", f.path().c_str(), t.name.c_str(), std::string(dtype_name(t.type)).c_str(),
                           std::string(dtype_name(to)).c_str())};
  }
  if (!is_float_type(t.type) && !o.allow_requantize) {
    return Error{strprintf("%s: tensor '%s' is already quantized (%s); quantize from an F32/F16/BF16 file, or pass "
                           "--allow-requantize to dequantize and quantize again (quality drops twice)",
                           f.path().c_str(), t.name.c_str(), std::string(dtype_name(t.type)).c_str())};
  }
  if (!can_quantize_to(to)) {
    return Error{strprintf("kairo cannot write type %s (tensor '%s')", std::string(dtype_name(to)).c_str(),
                           t.name.c_str())};
  }
  return {};
}

}  // namespace

Result<QuantizeReport> quantize_model(const std::string& in_path, const std::string& out_path,
                                      const QuantizeOptions& options, ThreadPool& pool,
                                      const TensorProgress& on_tensor) {
  if (in_path == out_path) {
    return Error{strprintf("the output %s is the input; write to another file", quote_for_error(out_path).c_str())};
  }
  KAIRO_TRY_ASSIGN(gguf::File in, gguf::File::open(in_path));
  KAIRO_TRY_ASSIGN(const ModelFacts facts, read_facts(in));

  std::vector<TensorDesc> descs;
  for (const auto& t : in.tensors()) descs.push_back({t.name, t.dims, t.type});
  const std::vector<DType> types = choose_tensor_types(descs, options.scheme, facts, options.pure);

  gguf::Writer writer(static_cast<uint32_t>(in.alignment()));
  for (const auto& [key, value] : in.metadata()) {
    // Re-added below, last, as llama-quantize does; the alignment is the Writer's own.
    if (key == "general.file_type" || key == "general.quantization_version" || key == "general.alignment") continue;
    writer.set(key, value);
  }
  writer.set("general.quantization_version", gguf::Value::u32(kQuantizationVersion));
  writer.set("general.file_type", gguf::Value::u32(static_cast<uint32_t>(options.scheme.file_type)));

  QuantizeReport report;
  report.in_bytes = in.file_size();
  const std::vector<size_t> order = quantize_order(descs);
  for (size_t idx : order) {
    const gguf::TensorInfo& t = in.tensors()[idx];
    const DType to = types[idx];
    KAIRO_TRY_STATUS(check_convertible(in, t, to, options));
    if (t.dims.empty() || t.dims[0] % dtype_info(to).block_size != 0) {
      return Error{strprintf("tensor '%s': rows of %lld elements do not split into %s blocks", t.name.c_str(),
                             static_cast<long long>(t.dims.empty() ? 0 : t.dims[0]),
                             std::string(dtype_name(to)).c_str())};
    }
    writer.add_tensor_info(t.name, to, t.dims);
    report.tensors.push_back({t.name, t.dims, t.type, to, row_bytes(to, t.dims[0]) * static_cast<uint64_t>(t.n_rows())});
  }

  KAIRO_TRY_ASSIGN(gguf::TensorStream stream, writer.open_stream(out_path));
  for (size_t i = 0; i < order.size(); ++i) {
    const gguf::TensorInfo& t = in.tensors()[order[i]];
    const QuantizedTensor& q = report.tensors[i];
    if (on_tensor) on_tensor(q, i, order.size());
    if (q.from == q.to) {
      KAIRO_TRY_STATUS(stream.write(t.data, t.n_bytes));
      continue;
    }
    const int64_t n_cols = t.dims[0];
    const size_t in_row_bytes = row_bytes(t.type, n_cols);
    const DType from = t.type;
    const uint8_t* src = t.data;
    KAIRO_TRY_STATUS(stream_rows(stream, q.to, n_cols, t.n_rows(),
                                 [&](int64_t row, float* out) {
                                   dequantize_row(from, src + static_cast<size_t>(row) * in_row_bytes, out, n_cols);
                                 },
                                 pool));
  }
  KAIRO_TRY_STATUS(stream.finish());
  KAIRO_TRY_ASSIGN(const gguf::File out, gguf::File::open(out_path));  // proves the file reads back
  report.out_bytes = out.file_size();
  return report;
}

}  // namespace kairo::convert
