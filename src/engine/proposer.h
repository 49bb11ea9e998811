#pragma once
// Speculative decoding's proposers: given a request's tokens so far, guess the next few. The engine verifies every
// guess against the target model in the same forward step as the rest of the batch and keeps only the prefix the
// target itself samples, so a proposer decides speed, never output.
#include <cstdint>
#include <span>
#include <vector>

namespace kairo::engine {

class Proposer {
 public:
  virtual ~Proposer() = default;
  // Up to k tokens to follow `tokens` (prompt then output; the first n_prompt are the prompt) into `out`, which is
  // cleared first. An empty guess costs nothing: the request decodes one token as usual.
  virtual void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) const = 0;
};

}  // namespace kairo::engine
