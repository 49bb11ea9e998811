#pragma once
// Single-sequence generation (the `kairo run` path): prefill the prompt in one batch, then decode token by token,
// with the sequence's KV in a private contiguous block range. The serving engine uses the same model forward with
// a shared paged pool instead.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "engine/grammar_constraint.h"
#include "model/model.h"
#include "sampling/sampling_config.h"

namespace kairo::engine {

struct GenerateOptions {
  int max_tokens = 128;
  sampling::SamplingConfig sampling;
  std::vector<int32_t> stop_token_ids;   // end-of-generation tokens (from the tokenizer)
  int n_logit_steps = 0;                 // keep the raw logits of the first n steps
  DType kv_dtype = DType::F16;
  int prefill_chunk = 512;               // prompt tokens per forward step
  // The tokens of context to keep KV for (prompt + output); 0 = the model's whole trained context. The KV cache is
  // allocated for all of it up front, so a long-context model needs a limit on a small machine.
  int context_limit = 0;
  // Batch-invariant matmuls even when sampling; temperature 0 always gets them. Otherwise the prompt may be
  // prefilled with relaxed numerics (kernels::Numerics), as the engine does for sampled requests.
  bool exact_numerics = false;
  // Constrained output (GrammarMaskers makes one): only tokens the grammar allows; stops when nothing can follow.
  std::shared_ptr<GrammarConstraint> grammar;
};

enum class StopReason { EndOfSequence, MaxTokens, ContextFull, GrammarComplete };
const char* stop_reason_name(StopReason r);

struct GenerateResult {
  std::vector<int32_t> tokens;                 // generated tokens (the end-of-sequence token included if hit)
  std::vector<std::vector<float>> step_logits; // raw logits of the first n_logit_steps steps
  StopReason stop_reason = StopReason::MaxTokens;
  double prefill_seconds = 0;
  double decode_seconds = 0;
};

// on_token(token) is called as each token is chosen (for streaming output).
Result<GenerateResult> generate(model::Model& model, const std::vector<int32_t>& prompt, const GenerateOptions& opts,
                                ThreadPool& pool, const std::function<void(int32_t)>& on_token = {});

}  // namespace kairo::engine
