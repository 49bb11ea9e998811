#include "plan/adapter_memory.h"

#include <algorithm>

#include "core/format.h"
#include "model/lora/adapter.h"
#include "model/lora/lora_set.h"
#include "model/tensor_table.h"

namespace kairo::plan {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

uint64_t element_bytes(DType t) { return static_cast<uint64_t>(dtype_info(t).block_bytes); }

}  // namespace

AdapterSize adapter_size(const std::vector<TensorSpec>& adapter_tensors) {
  AdapterSize s;
  for (const TensorSpec& t : adapter_tensors) {
    const bool a = ends_with(t.name, ".lora_a"), b = ends_with(t.name, ".lora_b");
    if ((!a && !b) || t.dims.size() != 2) continue;
    s.bytes += static_cast<uint64_t>(t.n_elements()) * element_bytes(model::lora::device_type(t.type));
    // GGUF dims: lora_a [n_in, rank], lora_b [rank, n_out].
    s.max_rank = std::max(s.max_rank, static_cast<int>(a ? t.dims[1] : t.dims[0]));
  }
  return s;
}

uint64_t full_adapter_bytes(const model::ModelConfig& config, int rank, DType type) {
  uint64_t n_elements = 0;
  for (const model::TensorEntry& e : model::model_tensors(config)) {
    if (!model::lora::is_adaptable(e) || e.dims.size() != 2) continue;
    n_elements += static_cast<uint64_t>(e.dims[0] + e.dims[1]) * static_cast<uint64_t>(rank);  // A and B
  }
  return n_elements * element_bytes(type);
}

uint64_t lora_scratch_bytes(const model::ModelConfig& c, int64_t max_batch_tokens, int max_rank) {
  const int64_t widest = std::max<int64_t>({c.dim, c.q_dim(), c.kv_dim(), c.ffn_dim});
  const int64_t n_floats = 2 * max_batch_tokens * widest + 3 * max_batch_tokens * max_rank;  // in, d; h
  return static_cast<uint64_t>(n_floats) * sizeof(float);
}

AdapterMemory adapter_memory(const model::ModelConfig& config, const AdapterMemoryRequest& r) {
  AdapterMemory m;
  int rank = 0;
  for (const AdapterSize& a : r.loaded) {
    m.loaded_bytes += a.bytes;
    rank = std::max(rank, a.max_rank);
  }
  m.n_loaded = static_cast<int>(r.loaded.size());
  if (r.runtime_loads) {
    m.n_runtime_slots = std::max(0, r.max_loras - m.n_loaded);
    m.runtime_rank = r.max_lora_rank;
    m.runtime_slot_bytes = full_adapter_bytes(config, r.max_lora_rank);
    if (m.n_runtime_slots > 0) rank = std::max(rank, r.max_lora_rank);
  }
  if (m.n_loaded + m.n_runtime_slots > 0) m.scratch_bytes = lora_scratch_bytes(config, r.max_batch_tokens, rank);
  return m;
}

std::string AdapterMemory::describe() const {
  std::string s;
  if (n_loaded > 0) {
    s = strprintf("%d adapter%s %s", n_loaded, n_loaded == 1 ? "" : "s", human_bytes(loaded_bytes).c_str());
  }
  if (n_runtime_slots > 0) {
    s += strprintf("%s%d runtime slot%s of rank %d × %s", s.empty() ? "" : " + ", n_runtime_slots,
                   n_runtime_slots == 1 ? "" : "s", runtime_rank, human_bytes(runtime_slot_bytes).c_str());
  }
  if (scratch_bytes > 0) s += strprintf(" + step scratch %s", human_bytes(scratch_bytes).c_str());
  return s;
}

}  // namespace kairo::plan
