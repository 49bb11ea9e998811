#pragma once
// `kairo bench batch`: B sequences at once through the continuous-batching engine, like llama-batched-bench. All B
// requests (random prompts of n_prompt tokens, n_gen greedy tokens each, end-of-sequence ignored) are submitted
// together; the prefill phase lasts until every sequence has its first token, the generation phase from then until
// the last one finishes. Requests reach the engine one by one, so the first step may hold only some of them (and with
// prompts beyond the step's token budget, prefill is chunked over several steps while early sequences already
// decode): that is how the engine serves such a burst. Aggregate generation t/s = tokens produced in the generation phase / its length: with the
// weights read once per step for all B sequences, this is what batching buys.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/speculative_config.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace kairo::bench {

struct BatchBenchOptions {
  std::vector<int> n_seqs{1, 2, 4, 8, 16, 32};
  int n_prompt = 128;
  int n_gen = 64;
  int n_threads = 0;                 // 0: all available cores
  int max_batched_tokens = 512;      // the engine's token budget per step
  DType kv_dtype = DType::F16;
  uint64_t seed = 42;                // random prompt tokens
  // 0: greedy requests, which get the batch-invariant (exact) kernels; above 0: seeded sampled requests, for which
  // the engine may take relaxed paths (kernels::Numerics).
  float temperature = 0.0f;
  // Every request constrained by this JSON Schema (empty: none): what structured output costs the batch. Requests
  // may then finish early (their text complete); the generation t/s counts the tokens produced.
  std::string json_schema;
  std::string gbnf;  // or a GBNF grammar (one that can always continue keeps every sequence to n_gen tokens)
  // Speculative decoding in the engine (method none, ngram or a draft model). With `oracle`, each batch size runs twice on the
  // same prompts: without speculation (recording the outputs), then with the recorded outputs as the proposals
  // (OracleProposer, speculative.num_tokens at most per step); both rows are reported.
  engine::SpeculativeConfig speculative;
  bool oracle = false;
  double oracle_accuracy = 1.0;  // the share of the oracle's proposed tokens that are right (OracleProposer)
  // LoRA (the model's adapters 1..n_adapters, already added): each batch size runs on the base, then again with its
  // sequences spread round-robin over the adapters (sequence i uses adapter 1 + i % n_adapters); both rows are
  // reported.
  int n_adapters = 0;
};

struct BatchBenchRow {
  int n_seqs = 0;
  int n_prompt = 0;
  int n_gen = 0;
  double prefill_seconds = 0;        // submit -> every sequence has its first token
  double gen_seconds = 0;            // -> the last sequence finished
  int64_t gen_tokens = 0;            // tokens produced during gen_seconds
  int64_t total_tokens = 0;          // tokens produced in all (n_seqs * n_gen)
  double total_seconds = 0;
  double prefill_tps = 0;            // n_seqs * n_prompt / prefill_seconds
  double gen_tps = 0;                // gen_tokens / gen_seconds
  double total_tps = 0;              // n_seqs * (n_prompt + n_gen) / total_seconds
  std::string speculative = "off";   // off, ngram, draft or oracle
  int n_adapters = 0;                // LoRA adapters the sequences were spread over (0: the base model)
  // Speculation in this row (engine counters): proposals verified, tokens proposed, tokens accepted. Acceptance
  // rate = accepted / draft tokens; mean accepted length per verification step = 1 + accepted / drafts.
  int64_t spec_drafts = 0;
  int64_t spec_draft_tokens = 0;
  int64_t spec_accepted = 0;
  // Every sequence's generated tokens, in submission order (the oracle's recording; compared across modes).
  std::vector<std::vector<int32_t>> outputs;
};

// on_row is called as each batch size finishes (progress output).
Result<std::vector<BatchBenchRow>> run_batch_bench(model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                                   const BatchBenchOptions& options,
                                                   const std::function<void(const BatchBenchRow&)>& on_row = {});

}  // namespace kairo::bench
