#include "engine/generator.h"

#include <algorithm>
#include <chrono>

#include "core/format.h"
#include "sampling/sampler_chain.h"

namespace kairo::engine {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::EndOfSequence: return "eos";
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::ContextFull: return "context_full";
    case StopReason::GrammarComplete: return "grammar_complete";
  }
  return "?";
}

namespace {
constexpr int kBlockSize = 16;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Appends tokens [begin, end) of `seq` at their positions; only the last one asks for logits.
void fill_batch(model::Batch& b, const std::vector<int32_t>& seq, int64_t begin, int64_t end, int n_blocks) {
  b.clear();
  b.max_blocks_per_seq = n_blocks;
  b.block_tables.resize(static_cast<size_t>(n_blocks));
  for (int i = 0; i < n_blocks; ++i) b.block_tables[static_cast<size_t>(i)] = i;
  for (int64_t p = begin; p < end; ++p) {
    b.token_ids.push_back(seq[static_cast<size_t>(p)]);
    b.positions.push_back(static_cast<int32_t>(p));
    b.seq_idx.push_back(0);
    b.slot_mapping.push_back(p);
  }
  b.logits_rows.push_back(static_cast<int32_t>(end - begin - 1));
}

}  // namespace

Result<GenerateResult> generate(model::Model& model, const std::vector<int32_t>& prompt, const GenerateOptions& opts,
                                ThreadPool& pool, const std::function<void(int32_t)>& on_token) {
  const model::ModelConfig& c = model.config();
  if (prompt.empty()) return Error{"the prompt is empty: give at least one token (or let the tokenizer add BOS)"};
  for (int32_t t : prompt) {
    if (t < 0 || t >= c.n_vocab) {
      return Error{strprintf("prompt token id %d is outside the vocabulary (0..%d)", t, c.n_vocab - 1)};
    }
  }
  if (opts.context_limit < 0) return Error{"the context limit must be positive (0 = the model's context)"};
  const int context = opts.context_limit > 0 ? std::min(opts.context_limit, c.context_length) : c.context_length;
  if (static_cast<int64_t>(prompt.size()) >= context) {
    return Error{context < c.context_length
                     ? strprintf("the prompt has %zu tokens but the context is limited to %d; shorten the prompt or "
                                 "raise the limit (--ctx-size, up to the model's %d)",
                                 prompt.size(), context, c.context_length)
                     : strprintf("the prompt has %zu tokens but the model's context is %d; shorten the prompt",
                                 prompt.size(), c.context_length)};
  }
  KAIRO_TRY_STATUS(sampling::validate_config(opts.sampling, c.n_vocab));
  const int n_blocks = (context + kBlockSize - 1) / kBlockSize;
  KAIRO_TRY_ASSIGN(model::KvStorage kv,
                   model::KvStorage::create(model.shared_device(), c, n_blocks, kBlockSize, opts.kv_dtype, 0,
                                            "lower --ctx-size (the KV cache covers the whole context up front)"));
  sampling::SamplerChain sampler = sampling::SamplerChain::from_config(opts.sampling);
  for (int32_t t : prompt) sampler.accept(t);

  GenerateResult result;
  std::vector<int32_t> seq = prompt;
  model::Batch batch;
  model::StepBuffers buffers(model.shared_device());
  std::vector<float> logits;

  const kernels::Numerics numerics = opts.exact_numerics || opts.sampling.temperature <= 0.0f
                                         ? kernels::Numerics::Exact
                                         : kernels::Numerics::Relaxed;
  auto t0 = std::chrono::steady_clock::now();
  const int64_t chunk = std::max(1, opts.prefill_chunk);
  for (int64_t begin = 0; begin < static_cast<int64_t>(seq.size()); begin += chunk) {
    const int64_t end = std::min<int64_t>(seq.size(), begin + chunk);
    fill_batch(batch, seq, begin, end, n_blocks);
    batch.numerics = numerics;
    model.forward(batch, kv, buffers, logits, pool);
  }
  result.prefill_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();

  for (int step = 0; step < opts.max_tokens; ++step) {
    if (step < opts.n_logit_steps) result.step_logits.push_back(logits);
    const float* sample_from = logits.data();
    if (opts.grammar) {
      sample_from = opts.grammar->mask(logits.data(), c.n_vocab);
      if (!opts.grammar->any_allowed()) {
        if (!opts.grammar->can_end()) return Error{"the output grammar allows no token of this model's vocabulary"};
        result.stop_reason = StopReason::GrammarComplete;
        break;
      }
    }
    const int32_t token = sampler.sample(sample_from, c.n_vocab);
    sampler.accept(token);
    if (opts.grammar && !opts.grammar->accept(token)) return Error{"the sampled token does not continue the grammar"};
    result.tokens.push_back(token);
    if (on_token) on_token(token);
    if (std::find(opts.stop_token_ids.begin(), opts.stop_token_ids.end(), token) != opts.stop_token_ids.end()) {
      result.stop_reason = StopReason::EndOfSequence;
      break;
    }
    if (opts.grammar && !opts.grammar->can_continue()) {
      result.stop_reason = StopReason::GrammarComplete;
      break;
    }
    if (step + 1 == opts.max_tokens) break;
    if (static_cast<int64_t>(seq.size()) + 1 >= context) {  // prompt + generated fill the context
      result.stop_reason = StopReason::ContextFull;
      break;
    }
    seq.push_back(token);
    fill_batch(batch, seq, static_cast<int64_t>(seq.size()) - 1, static_cast<int64_t>(seq.size()), n_blocks);
    model.forward(batch, kv, buffers, logits, pool);
  }
  result.decode_seconds = seconds_since(t0);
  return result;
}

}  // namespace kairo::engine
