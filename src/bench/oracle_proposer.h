#pragma once
// The bench's oracle proposer (`kairo bench batch --speculative oracle`): proposes the target model's own greedy
// continuation, recorded by a run without speculation, so every guess is accepted. It measures what verifying k
// tokens per step costs and saves, independent of how good a real proposer's guesses are.
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "engine/proposer.h"

namespace kairo::bench {

class OracleProposer final : public engine::Proposer {
 public:
  // accuracy < 1: each proposed token is the recorded one with this probability (a fixed hash of the request and
  // position decides), otherwise a wrong one; acceptance then falls as it does for real proposers.
  OracleProposer(double accuracy, int32_t n_vocab) : accuracy_(accuracy), n_vocab_(n_vocab) {}

  // prompt -> the tokens generated after it.
  void set(std::map<std::vector<int32_t>, std::vector<int32_t>> continuations) {
    std::lock_guard<std::mutex> lock(mutex_);
    continuations_ = std::move(continuations);
  }

  void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) override {
    out.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = continuations_.find(std::vector<int32_t>(tokens.begin(), tokens.begin() + n_prompt));
    if (it == continuations_.end()) return;
    const size_t n_generated = tokens.size() - static_cast<size_t>(n_prompt);
    for (size_t i = n_generated; i < it->second.size() && out.size() < static_cast<size_t>(k); ++i) {
      const uint64_t h = (static_cast<uint64_t>(tokens[0]) * 0x9E3779B97F4A7C15ull + i) * 0xBF58476D1CE4E5B9ull;
      const bool right = static_cast<double>(h >> 11) / 9007199254740992.0 < accuracy_;
      out.push_back(right ? it->second[i] : (it->second[i] + 1) % n_vocab_);
    }
  }

 private:
  double accuracy_;
  int32_t n_vocab_;
  mutable std::mutex mutex_;
  std::map<std::vector<int32_t>, std::vector<int32_t>> continuations_;
};

}  // namespace kairo::bench
