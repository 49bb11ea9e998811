#pragma once
// How the engine speculates (issue: speculative decoding inside the continuous batch). Off by default.
#include <memory>

#include "engine/ngram_proposer.h"
#include "engine/proposer.h"

namespace kairo::engine {

enum class SpeculativeMethod { None, Ngram, Custom };

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::None;
  // Most tokens proposed per request and step. Each request starts there and adapts: after a step whose guesses
  // were all accepted it proposes one more (up to this), after a rejection as many as were accepted plus one.
  int num_tokens = 4;
  NgramConfig ngram;
  // Nobody speculates in a step when this many requests run or more: a larger batch is compute-bound already, and
  // a rejected guess then costs as much as a real token. 0: always speculate.
  int max_batch = 8;
  std::shared_ptr<const Proposer> custom;  // SpeculativeMethod::Custom (tests, the bench's oracle)
};

}  // namespace kairo::engine
