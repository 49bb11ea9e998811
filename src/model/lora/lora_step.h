#pragma once
// One step's LoRA deltas (the SGMV idea over kernels::Device): the step's tokens are grouped by adapter, and for each
// call site (the projections reading one input: Q, K and V; gate and up; O; down) every group's shrink h = A·x
// (rank r) and expand d = B·(scale·h) run over just its rows, d added into those rows of y. One
// Device::add_lora_deltas per call site does all of it: the CPU device in two parallel passes, other devices as
// gathers and small matmuls per group. Tokens of the base (adapter 0) cost nothing.
//
// Batch invariance: a token's delta is computed from its own values only, in an order fixed by the shapes
// (kernels::LoraDeltas), and is added to its row of y after W·x, call site by call site in a fixed order; so a
// token's result is the same alone, in any group, in any batch.
#include <cstdint>
#include <vector>

#include "core/result.h"
#include "kernels/device.h"
#include "model/config.h"
#include "model/lora/lora_set.h"

namespace kairo::model::lora {

// The step's LoRA buffers (part of model::StepBuffers), grown to the largest step seen.
struct LoraScratch {
  kernels::DeviceSpan in;  // [n_tokens, widest input] one group's gathered input rows (DeviceLoraDeltas::gather)
  kernels::DeviceSpan h;   // [3, n_tokens, max_rank] the shrinks of up to three projections sharing an input
  kernels::DeviceSpan d;   // [n_tokens, widest output] one expand's output (DeviceLoraDeltas::expand)
  int64_t token_capacity = 0;
  int rank_capacity = 0;
  // Host side of the grouping, reused from step to step.
  std::vector<int32_t> rows;     // the step's tokens, group after group (ascending within a group)
  std::vector<int64_t> offsets;  // [n_groups + 1]
  std::vector<int> adapters;     // [n_groups] adapter index of each group
  std::vector<float> ones;       // [n_tokens] 1.0f: add_rows_scaled's scales (h carries the scale)
  std::vector<kernels::DeviceLoraPair> pairs;  // [n_groups, n_targets] one call site's pairs

  Status reserve(kernels::Device& dev, const ModelConfig& c, int64_t n_tokens, int max_rank);
  void release(kernels::Device& dev);
};

class LoraStep {
 public:
  // No adapters in the step (set null or empty, adapter_idx empty or all 0): apply does nothing. Otherwise stages
  // the grouping on `dev` (call between begin_step and end_step). adapter_idx: [n_tokens], 0 = base.
  LoraStep(const LoraSet* set, const std::vector<int32_t>& adapter_idx, const ModelConfig& c, kernels::Device& dev,
           LoraScratch& scratch);

  bool active() const { return active_; }
  // ys[i] += delta of targets[i] for layer `layer`, the targets reading the same input x ([n_tokens, n_in]).
  void apply(int layer, const LoraTarget* targets, int n_targets, kernels::DeviceSpan x, int64_t n_in,
             const kernels::DeviceSpan* ys, kernels::Numerics numerics) const;

 private:
  const LoraSet* set_ = nullptr;
  kernels::Device* dev_ = nullptr;
  LoraScratch* scratch_ = nullptr;
  int64_t n_tokens_ = 0;
  bool active_ = false;
  kernels::DeviceSpan rows_;  // staged scratch.rows
  kernels::DeviceSpan ones_;  // staged scratch.ones
};

// Checks adapter_idx against the set: every index from 0 to set.size(). For the engine and tests (the decoder
// trusts its batch).
bool valid_adapter_indices(const LoraSet* set, const std::vector<int32_t>& adapter_idx);

}  // namespace kairo::model::lora
