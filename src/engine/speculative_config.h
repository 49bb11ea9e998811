#pragma once
// How the engine speculates (issue: speculative decoding inside the continuous batch). Off by default.
#include <memory>

#include "engine/ngram_proposer.h"
#include "engine/proposer.h"
#include "model/model.h"

namespace kairo::engine {

enum class SpeculativeMethod { None, Ngram, DraftModel, Custom };

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::None;
  // Most tokens proposed per request and step. Each request starts there and adapts: after a step whose guesses
  // were all accepted it proposes one more (up to this), after a rejection as many as were accepted plus one.
  int num_tokens = 4;
  NgramConfig ngram;
  // Speculate only in steps where it pays, by the engine's measured step times and acceptance (SpeculationGate):
  // in a compute-bound batch a rejected guess costs as much as a real token. false: whenever there are proposals.
  bool adaptive = true;
  // And never in a step where this many requests run or more (0: no such cap).
  int max_batch = 0;
  std::shared_ptr<Proposer> custom;  // SpeculativeMethod::Custom (tests, the bench's oracle)
  // SpeculativeMethod::DraftModel: a smaller model with the target's vocabulary (checked by the caller, which loads
  // it) proposes its continuation: its argmax for a greedy request (or under exact numerics), drawn from its
  // distribution for a sampled one. Its KV pool holds draft_kv_blocks blocks of the engine's block size (0:
  // as many as the target's pool).
  model::Model* draft_model = nullptr;
  int64_t draft_kv_blocks = 0;
};

}  // namespace kairo::engine
