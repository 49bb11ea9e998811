#pragma once
// The sub-blocks' outputs joining the residual stream: the dense gated feed-forward, the mixture of experts, and the
// residual add (through gemma's post-norm where the family has one). Parts of decoder_forward, over the step's
// buffers; ModelConfig says which activation, norms and biases apply.
#include "model/config.h"
#include "model/decoder.h"
#include "model/weights.h"

namespace kairo::model {

// x += s.proj, through the sub-block's own norm first where the family has one (gemma's post-norms).
void add_to_residual(const ModelConfig& c, kernels::Device& dev, StepBuffers& s, kernels::DeviceSpan post_norm,
                     int64_t n);

// x += W_down · act(W_gate · xn, W_up · xn), each projection with the step's LoRA deltas for layer `layer`.
void dense_feed_forward(const ModelConfig& c, const LayerWeights& L, int layer, int64_t n, StepBuffers& s,
                        const lora::LoraStep& lora_step, kernels::Numerics numerics);

// x += sum over each token's chosen experts of weight * expert(xn). The router's logits come to the host (a sync
// point on devices with memory of their own), which groups the tokens by expert: each chosen expert's weights are
// read once for all of its tokens, and no other expert's are read at all.
void moe_feed_forward(const ModelConfig& c, const LayerWeights& L, int64_t n, StepBuffers& s,
                      kernels::Numerics numerics);

}  // namespace kairo::model
