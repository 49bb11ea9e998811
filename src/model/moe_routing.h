#pragma once
// Mixture-of-experts routing, on the host: from the router's logits to which tokens each expert serves and with what
// weight. Softmax over every expert, the n_used most probable kept, their probabilities renormalised to sum to one
// (qwen3moe and Mixtral; the same as a softmax over the chosen experts' logits).
#include <cstdint>
#include <vector>

namespace kairo::model {

// The tokens one expert serves in a step: rows into the step's tokens (ascending) and each token's weight.
struct ExpertTokens {
  int expert = 0;
  std::vector<int32_t> rows;
  std::vector<float> weights;
};

// A step's routing: the experts with at least one token, in ascending expert id. A token's feed-forward output is
// accumulated in that order whatever the rest of the batch, so its result does not depend on the batch.
struct Routing {
  std::vector<ExpertTokens> experts;
  int n_active() const { return static_cast<int>(experts.size()); }
};

// logits: [n_tokens, n_experts]. Ties between equal probabilities go to the lower expert id.
void route_tokens(const float* logits, int64_t n_tokens, int n_experts, int n_used, Routing& out);

}  // namespace kairo::model
