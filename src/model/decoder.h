#pragma once
// The generic pre-norm decoder (llama family and its relatives), written once over kernels::Device and
// parameterised by ModelConfig. Every tensor it touches lives on the device; per step only the batch description
// goes up and only the logits rows that were asked for come down.
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/device.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/kv_storage.h"
#include "model/lora/lora_set.h"
#include "model/lora/lora_step.h"
#include "model/moe_routing.h"
#include "model/weights.h"

namespace kairo::model {

// A step's activation buffers on the device, grown to the largest batch seen and then reused (no allocation in
// steady state). Whoever runs steps owns one (the engine's model runner, the generator, the benchmarks); freed with
// it.
class StepBuffers {
 public:
  explicit StepBuffers(std::shared_ptr<kernels::Device> device) : device_(std::move(device)) {}
  ~StepBuffers() { release(); }
  StepBuffers(const StepBuffers&) = delete;
  StepBuffers& operator=(const StepBuffers&) = delete;

  // Grows the buffers to hold a step of n_tokens tokens and n_logits logits rows. The error names the buffer the
  // device could not hold and the knob that shrinks it.
  Status reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits);
  kernels::Device& device() const { return *device_; }

  // Host side of the mixture-of-experts routing (devices without host memory bring the router logits down here).
  std::vector<float> router_host;
  Routing routing;
  std::vector<kernels::DeviceMatrix> moe_gate_up, moe_down;  // the active experts' weights (grouped matmuls)

  kernels::DeviceSpan x;      // [n_tokens, dim] residual stream
  kernels::DeviceSpan xn;     // [n_tokens, dim] normed input of a sub-block
  kernels::DeviceSpan q;      // [n_tokens, q_dim]
  kernels::DeviceSpan k;      // [n_tokens, kv_dim]
  kernels::DeviceSpan v;      // [n_tokens, kv_dim]
  kernels::DeviceSpan attn;   // [n_tokens, q_dim]
  // A mixture of experts' rows below are one per (token, chosen expert): n_tokens x expert_used_count.
  kernels::DeviceSpan proj;   // [rows, dim]
  kernels::DeviceSpan gate;   // [rows, ffn width] (dense: ffn_dim; mixture of experts: expert_ffn_dim)
  kernels::DeviceSpan up;     // [rows, ffn width]
  kernels::DeviceSpan router; // [n_tokens, n_experts]   (mixture of experts only)
  kernels::DeviceSpan moe_in; // [n_tokens, dim] the normed rows of one expert's tokens (devices that gather them)
  kernels::DeviceSpan out_x;  // [n_logits, dim]
  kernels::DeviceSpan logits; // [n_logits, n_vocab] (devices without host memory)
  lora::LoraScratch lora;     // the LoRA shrinks and expands (steps with adapters only)

 private:
  void release();

  std::shared_ptr<kernels::Device> device_;
  int64_t token_capacity_ = 0;
  int64_t logits_capacity_ = 0;
};

// Throws kernels::DeviceLost when the device fails mid-step, and std::runtime_error when the step's buffers do not
// fit on the device (the engine bounds steps by --max-num-batched-tokens, which the planner checked).
// `loras`: the adapters batch.adapter_idx refers to (null: none). `hidden`: batch.hidden_rows' final hidden states
// ([rows, dim], after the output norm), when the batch asks for any.
void decoder_forward(const ModelConfig& c, const ModelWeights& w, const Batch& batch, KvStorage& kv, StepBuffers& s,
                     std::vector<float>& logits, ThreadPool& pool, const lora::LoraSet* loras = nullptr,
                     std::vector<float>* hidden = nullptr);

}  // namespace kairo::model
