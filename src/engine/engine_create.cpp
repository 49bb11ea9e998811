// Engine::create: the checks a configuration must pass before an engine starts (context, blocks, adapters,
// speculation) and the KV storage it allocates up front, each failure with what to change. The engine itself is
// engine.cpp.
#include <algorithm>
#include <cmath>
#include <exception>
#include <system_error>

#include "core/format.h"
#include "core/out_of_memory.h"
#include "engine/engine.h"

namespace kairo::engine {
namespace {

int64_t blocks_for(int64_t n_tokens, int block_size) { return (n_tokens + block_size - 1) / block_size; }

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                               EngineConfig config) {
  const model::ModelConfig& c = model.config();
  if (tokenizer.n_vocab() > c.n_vocab) {
    return Error{strprintf("the tokenizer has %d tokens but the model's embedding only %d", tokenizer.n_vocab(),
                           c.n_vocab)};
  }
  if (config.block_size <= 0 || config.block_size > 1024) return Error{"--block-size must be in 1..1024"};
  if (config.scheduler.max_num_batched_tokens <= 0 || config.scheduler.max_num_seqs <= 0) {
    return Error{"--max-num-batched-tokens and --max-num-seqs must be positive"};
  }
  if (config.max_model_len == 0) config.max_model_len = c.context_length;
  if (config.max_model_len < 0 || config.max_model_len > c.context_length) {
    return Error{strprintf("--max-model-len %d is outside 1..%d (the model's context length)", config.max_model_len,
                           c.context_length)};
  }
  const int64_t min_blocks = blocks_for(config.max_model_len, config.block_size);
  int64_t n_blocks = config.n_kv_blocks;
  if (n_blocks <= 0) n_blocks = static_cast<int64_t>(config.scheduler.max_num_seqs) * min_blocks;
  if (n_blocks < min_blocks) {
    return Error{strprintf("a KV pool of %lld blocks of %d tokens is smaller than one sequence of %d tokens "
                           "(max_model_len) needs: %lld blocks",
                           static_cast<long long>(n_blocks), config.block_size, config.max_model_len,
                           static_cast<long long>(min_blocks))};
  }
  const SpeculativeConfig& spec = config.speculative;
  if (spec.method != SpeculativeMethod::None) {
    if (spec.num_tokens < 1 || spec.num_tokens > 64) return Error{"--num-speculative-tokens must be in 1..64"};
    if (spec.ngram.min_n < 1 || spec.ngram.max_n < spec.ngram.min_n) {
      return Error{"the n-gram proposer needs 1 <= --ngram-min <= --ngram-max"};
    }
    if (spec.max_batch < 0) return Error{"--speculative-max-batch must be >= 0"};
    if (spec.method == SpeculativeMethod::Custom && !spec.custom) return Error{"a custom proposer was not given"};
    if (spec.method == SpeculativeMethod::DraftModel) {
      if (!spec.draft_model) return Error{"speculative decoding with a draft model needs --draft-model"};
      const model::ModelConfig& d = spec.draft_model->config();
      if (d.n_vocab != c.n_vocab) {
        return Error{strprintf("the draft model's vocabulary has %d tokens but the model's %d: a draft model must "
                               "share the model's tokenizer",
                               d.n_vocab, c.n_vocab)};
      }
      if (d.context_length < config.max_model_len) {
        return Error{strprintf("the draft model's context is %d tokens, shorter than --max-model-len %d; lower "
                               "--max-model-len or use another draft model",
                               d.context_length, config.max_model_len)};
      }
    }
  }
  if (config.max_loras < 0) return Error{"--max-loras must be >= 0"};
  if (config.max_loras > 0 && model.adapters().n_in_use() > config.max_loras) {
    return Error{strprintf("%d LoRA adapters are loaded but --max-loras is %d; raise --max-loras",
                           model.adapters().n_in_use(), config.max_loras)};
  }
  model.set_context_length(config.max_model_len);  // long-context rope picks its factors by it
  const int64_t n_window_blocks =
      c.n_windowed_layers() > 0 && !config.keep_windowed_kv
          ? std::min(n_blocks, kv::window_group_blocks(c.sliding_window, config.block_size,
                                                       config.scheduler.max_num_seqs,
                                                       config.scheduler.max_num_batched_tokens))
          : 0;
  // +1: block 0 is the reserved null block.
  KAIRO_TRY_ASSIGN(model::KvStorage storage,
                   model::KvStorage::create(model.shared_device(), c, n_blocks + 1, config.block_size, config.kv_dtype,
                                            n_window_blocks > 0 ? n_window_blocks + 1 : 0));
  model::KvStorage draft_storage;
  if (spec.method == SpeculativeMethod::DraftModel) {
    const int64_t n_draft_blocks = spec.draft_kv_blocks > 0 ? std::max(spec.draft_kv_blocks, min_blocks) : n_blocks;
    KAIRO_TRY_ASSIGN(draft_storage,
                     model::KvStorage::create(spec.draft_model->shared_device(), spec.draft_model->config(),
                                              n_draft_blocks + 1, config.block_size, config.kv_dtype));
  }
  // The engine's own tables (per-block KV bookkeeping, grammar maskers, step buffers) and its threads: one that
  // cannot be allocated or started is an Error like the KV cache's, not an exception out of create.
  try {
    return std::unique_ptr<Engine>(new Engine(model, tokenizer, config, std::move(storage), n_blocks,
                                              n_window_blocks, std::move(draft_storage)));
  } catch (const std::bad_alloc& e) {
    return Error{strprintf("out of memory while setting up the engine for %lld KV blocks: %s%s; lower "
                           "--kv-cache-memory or --mem-budget-gb (kairo plan predicts what fits)",
                           static_cast<long long>(n_blocks), describe_allocation_failure(e).c_str(),
                           address_space_limit_note().c_str())};
  } catch (const std::system_error& e) {
    return Error{strprintf("cannot start the engine's threads (%s)%s; lower --threads", e.what(),
                           address_space_limit_note().c_str())};
  }
}

}  // namespace kairo::engine
