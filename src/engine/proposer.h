#pragma once
// Speculative decoding's proposers: given a request's tokens so far, guess the next few. The engine verifies every
// guess against the target model in the same forward step as the rest of the batch and keeps only the prefix the
// target itself samples, so a proposer decides speed, never output.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sampling/sampler_chain.h"

namespace kairo::engine {

// One request's part of a step's proposals.
struct ProposalSlot {
  uint64_t request = 0;               // the engine's request id (a proposer with per-request state keys it by this)
  std::span<const int32_t> tokens;    // prompt then output so far
  int n_prompt = 0;
  int k = 0;                          // tokens wanted at most
  std::vector<int32_t>* out = nullptr;
  // A sampled request's guesses, for a proposer that can draw them (a draft model): drawn with `rng` from the
  // proposer's distribution through `filters`, each guess's distribution appended to `q` (the engine verifies them by
  // the min(1, p/q) rule, sampling/speculative_rule.h). Null: guesses are deterministic (the engine then samples the
  // target and compares, the same rule for a q of probability 1).
  sampling::SamplerChain* filters = nullptr;
  std::mt19937_64* rng = nullptr;
  std::vector<sampling::SparseDistribution>* q = nullptr;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  // Up to k tokens to follow `tokens` (prompt then output; the first n_prompt are the prompt) into `out`, which is
  // cleared first. An empty guess costs nothing: the request decodes one token as usual.
  virtual void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) = 0;
  // Every decoding request of a step at once (a draft model runs one batched step per proposed position). By
  // default, propose() for each.
  virtual void propose_all(std::span<const ProposalSlot> slots) {
    for (const ProposalSlot& s : slots) propose(s.tokens, s.n_prompt, s.k, *s.out);
  }
  // The request ended: a proposer that keeps state for it lets it go.
  virtual void release(uint64_t /*request*/) {}
};

}  // namespace kairo::engine
