#pragma once
// Mixture-of-experts routing, on the host: from the router's logits to which tokens each expert serves and with what
// weight. Softmax over every expert, the n_used most probable kept, their probabilities renormalised to sum to one
// (qwen3moe and Mixtral; the same as a softmax over the chosen experts' logits).
#include <cstdint>
#include <span>
#include <vector>

namespace kairo::model {

// A step's routing: the experts with at least one token, in ascending expert id, and for each the tokens it serves
// (ascending) with their weights, packed expert after expert (the grouped matmul's layout: kernels::GroupedMatmul). A
// token's feed-forward output is accumulated in expert order whatever the rest of the batch, so its result does not
// depend on the batch.
struct Routing {
  std::vector<int> experts;      // [n_active]
  std::vector<int64_t> offsets;  // [n_active + 1]: expert k's entries are [offsets[k], offsets[k + 1])
  std::vector<int32_t> rows;     // per entry: the token (a row of the step)
  std::vector<float> weights;    // per entry: the token's weight for that expert

  int n_active() const { return static_cast<int>(experts.size()); }
  int64_t n_entries() const { return static_cast<int64_t>(rows.size()); }
  std::span<const int32_t> rows_of(int k) const { return {rows.data() + offsets[k], rows.data() + offsets[k + 1]}; }
  std::span<const float> weights_of(int k) const {
    return {weights.data() + offsets[k], weights.data() + offsets[k + 1]};
  }
};

// logits: [n_tokens, n_experts]. Ties between equal probabilities go to the lower expert id.
void route_tokens(const float* logits, int64_t n_tokens, int n_experts, int n_used, Routing& out);

}  // namespace kairo::model
