#pragma once
// `kairo lora merge BASE ADAPTER OUT [--scale S]`: bakes a LoRA adapter into a model. Every adapted tensor becomes
// W' = W + scale_t · B·A (scale_t = the pair's alpha / rank × S, model/lora/adapter_format.h), re-encoded in the base
// tensor's own type; every other tensor and all metadata are copied unchanged (plus kairo.lora.merged_adapter and
// kairo.lora.merged_scale, the provenance). A pair whose scale is 0 changes nothing and is copied byte for byte
// (re-encoding an unchanged K-quant row may not reproduce it), so a scale-0 merge is the base model exactly.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "model/lora/adapter.h"
#include "tensor/dtype.h"

namespace kairo::convert {

struct MergeOptions {
  float scale = 1.0f;                // the user's scale
  int max_rank = model::lora::kDefaultMaxRank;
};

struct MergedTensor {
  std::string name;
  DType type = DType::F32;           // the base tensor's, kept
  int rank = 0;
  float scale = 0;                   // the effective scale applied
};

struct MergeReport {
  std::vector<MergedTensor> merged;  // in file order
  size_t n_copied = 0;               // tensors copied unchanged
  std::vector<std::string> ignored;  // adapter tensors skipped (norm vectors, as llama.cpp does)
  uint64_t out_bytes = 0;
};

// One output row of an adapted tensor: out[i] = base_row[i] + w.scale · Σ_k B[row][k] · A[k][i] (the sum in float,
// k ascending), i < w.n_in. The reference the merge is tested against and later adapter application is checked by.
void merge_row(const model::lora::LoraWeight& w, int64_t row, const float* base_row, float* out);

// on_tensor(name, index, count) before each tensor is written (progress output).
using MergeProgress = std::function<void(const std::string&, size_t, size_t)>;

Result<MergeReport> merge_adapter(const std::string& base_path, const std::string& adapter_path,
                                  const std::string& out_path, const MergeOptions& options, ThreadPool& pool,
                                  const MergeProgress& on_tensor = {});

}  // namespace kairo::convert
