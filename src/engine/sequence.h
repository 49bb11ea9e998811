#pragma once
// The engine's state for one request: its tokens so far, how many have KV computed, and the per-request sampler,
// detokenizer and stop matcher. Owned by the engine thread only.
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "engine/grammar_constraint.h"
#include "engine/stop_matcher.h"
#include "kv/kv_cache_manager.h"
#include "sampling/sampler_chain.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {

using Clock = std::chrono::steady_clock;

enum class SeqStatus { Waiting, Running, Finished };

struct Sequence {
  RequestId id = 0;
  Request request;
  OutputCallback on_output;

  std::vector<int32_t> tokens;  // prompt followed by generated tokens
  int n_prompt = 0;
  int n_computed = 0;           // tokens whose KV is in the cache
  int n_cached_prompt = 0;      // prompt tokens served by the prefix cache (first admission)
  bool admitted_once = false;
  SeqStatus status = SeqStatus::Waiting;
  uint64_t admit_seq = 0;       // order of (re)admission: preemption picks the most recent
  // Fair sharing between tenants (engine/fair_share.h): the last step that gave it tokens, so a tenant's decodes held
  // back by its share take turns; and whether its decode is among those chosen for the step being planned.
  uint64_t served_step = 0;
  bool decode_turn = false;

  sampling::SamplerChain sampler;
  std::unique_ptr<tokenizer::IncrementalDecoder> decoder;
  std::unique_ptr<StopMatcher> stop;
  std::unique_ptr<GrammarConstraint> grammar;  // made on the engine thread when the request has a grammar

  Clock::time_point arrival;
  Clock::time_point first_scheduled;
  Clock::time_point first_token;
  bool abort_requested = false;

  // Whether this request needs the batch-invariance contract (temperature 0, or the engine's exact_numerics), and
  // its prefix-cache key: the request's cache salt, kept apart from the exact requests' when it does not (KV
  // computed with relaxed numerics must never serve a request that needs exact ones).
  bool exact_numerics = true;
  std::string kv_salt;
  // The model::lora::LoraSet index its tokens run with: request.adapter, or a scaled copy of it for a per-request
  // scale (Request::adapter_scale), or 0 (the base). Set on the engine thread when the request arrives.
  int lora_index = 0;

  // KV forks (Request::fork_of): a parked child waits, outside the scheduler, for its parent's prompt.
  Sequence* fork_parent = nullptr;   // set while parked
  std::vector<Sequence*> forks;      // children parked on this sequence

  // Speculative decoding: this step's proposed continuation (verified by the step, then cleared), and how many
  // tokens this request proposes at most next time (SpeculativeConfig::num_tokens, adapted to its acceptance).
  std::vector<int32_t> draft;
  int spec_k = 0;
  // A sampled request's guesses drawn from a draft model's distribution: the filters they are drawn through (null: a
  // greedy request, or speculation off), the random stream that draws and verifies them, and each guess's
  // distribution (empty when the guesses are deterministic: n-gram, or a greedy request).
  std::unique_ptr<sampling::SamplerChain> draft_filters;
  std::mt19937_64 spec_rng;
  std::vector<sampling::SparseDistribution> draft_q;

  // An embedding request (Request::embedding): the sum of its prompt tokens' final hidden states in position order
  // (mean pooling) or the one state it pools, and how many positions that covers, so the positions a preempted
  // request computes again are not added twice.
  std::vector<double> pooled;
  int n_pooled = 0;
  bool embedding() const { return request.embedding != EmbeddingPooling::None; }

  int n_generated() const { return static_cast<int>(tokens.size()) - n_prompt; }
  int n_uncomputed() const { return static_cast<int>(tokens.size()) - n_computed; }
};

}  // namespace kairo::engine
