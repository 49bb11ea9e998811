#pragma once
// Prompt lookup (n-gram) proposals, as vLLM's `ngram` method and llama.cpp's lookup decoding: find the most recent
// earlier place where the request's last n tokens occurred (n from max_n down to min_n) and propose the tokens that
// followed it. Summaries, edits, code and extraction copy long spans of their prompt, and greedy loops repeat their
// own output: there the guesses are right; elsewhere nothing matches and nothing is proposed.
#include "engine/proposer.h"

namespace kairo::engine {

struct NgramConfig {
  int min_n = 2;  // shortest suffix matched (1 proposes after any repeated token: cheap guesses, often wrong)
  int max_n = 4;  // longest suffix tried first
};

class NgramProposer final : public Proposer {
 public:
  explicit NgramProposer(NgramConfig config) : config_(config) {}
  void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) override;

 private:
  NgramConfig config_;
};

}  // namespace kairo::engine
