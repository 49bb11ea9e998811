#pragma once
// The continuous-batching engine: a thread runs schedule -> forward -> sample -> post-process; clients submit,
// stream and abort through the thread-safe EngineClient interface.
#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/check.h"
#include "core/result.h"
#include "core/thread_pool.h"
#include "engine/adapter_slots.h"
#include "engine/engine_client.h"
#include "engine/model_runner.h"
#include "engine/scheduler.h"
#include "engine/draft_model_proposer.h"
#include "engine/sequence.h"
#include "engine/speculation_gate.h"
#include "engine/speculative_config.h"
#include "kv/kv_cache_manager.h"
#include "model/kv_storage.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace kairo::engine {

struct EngineConfig {
  SchedulerConfig scheduler;
  int block_size = 16;
  int max_model_len = 0;          // longest prompt + output served; 0 = the model's context length
  // Usable KV blocks; 0 = room for max_num_seqs sequences of max_model_len. The engine only checks that one
  // sequence of max_model_len fits: sizing the pool to a memory budget is the planner's job (plan::size_kv_pool,
  // called by `kairo serve`), so the server's capacity is the one `kairo plan` predicts.
  int64_t n_kv_blocks = 0;
  DType kv_dtype = DType::F16;
  bool enable_prefix_caching = true;
  int max_waiting = 1024;         // queued requests beyond this are refused (HTTP 429)
  int n_threads = 0;              // 0 = all available cores
  // Batch-invariant (kernels::Numerics::Exact) matmuls for every request. Otherwise only temperature-0 requests
  // get them, and steps with none of those may take faster relaxed paths (long prompts: AMX bf16 tiles).
  bool exact_numerics = false;
  // Sliding-window layers keep the KV of the whole context, as full-attention layers do, instead of a block pool of
  // their own that frees what falls behind the window (kv::window_group_blocks). For comparisons and debugging.
  bool keep_windowed_kv = false;
  SpeculativeConfig speculative;
  // LoRA adapters resident at once: those the model has at create() and those load_adapter adds (0: the ones at
  // create, and no loads). Adapters loaded at run time are read with ranks up to max_lora_rank.
  int max_loras = 0;
  int max_lora_rank = model::lora::kDefaultMaxRank;
  // Device bytes the resident adapters may take at once (0: no cap): `kairo serve` reserves them from its memory
  // budget (plan::AdapterMemory::adapters_bytes), and a load beyond them is refused (AdapterError::Full) rather
  // than run the device out of memory.
  uint64_t max_lora_bytes = 0;
};

class Engine final : public EngineClient {
 public:
  static Result<std::unique_ptr<Engine>> create(model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                                EngineConfig config);
  ~Engine() override;

  std::variant<RequestId, SubmitRejection> submit(Request request, OutputCallback on_output) override;
  void abort(RequestId id) override;
  // The engine owns the model's adapter set while it runs (engine_adapters.cpp): it adds and frees adapters between
  // steps. What load_adapter adds stays in the model after the engine is gone.
  std::variant<LoadedAdapter, AdapterRefusal> load_adapter(const std::string& path, float scale) override;
  std::variant<int, AdapterRefusal> unload_adapter(int id, uint64_t generation) override;
  EngineStats stats() const override;
  int context_length() const override { return config_.max_model_len; }  // resolved: never 0
  int n_vocab() const override { return model_.config().n_vocab; }

  // Refuses new requests from now on (ShuttingDown); running ones continue.
  void stop_accepting();
  // Waits until no request is left or the timeout passes; then aborts what remains. True if it drained.
  bool drain(double timeout_seconds);

  int64_t n_kv_blocks() const { return n_blocks_; }
  // Usable blocks of the sliding-window layers' own pool; 0 when they share the full-attention layers' blocks.
  int64_t n_window_kv_blocks() const { return n_window_blocks_; }
  int64_t kv_capacity_tokens() const { return n_blocks_ * config_.block_size; }
  uint64_t kv_bytes() const { return storage_.n_bytes(); }
  // "KV cache: N tokens (X MiB, F16, B blocks of 16), max concurrency C at context L" (L = max_model_len), and the
  // draft model's pool when there is one
  std::string memory_summary() const;
  std::string failure() const override;
  EngineFailure failure_state() const override;

 private:
  Engine(model::Model& model, const tokenizer::Tokenizer& tokenizer, EngineConfig config, model::KvStorage storage,
         int64_t n_blocks, int64_t n_window_blocks, model::KvStorage draft_storage);
  void loop();
  void take_inbox();
  void step();
  // The device failed mid-step: every request in flight ends with the error, and the engine refuses new ones.
  void fail_all(const std::string& error, FailureKind kind = FailureKind::DeviceLost);
  // A KAIRO_CHECK failed on the engine thread (engine_failure.cpp): like fail_all, and the KV bookkeeping is
  // never touched again.
  void fail_broken_invariant(const InvariantViolation& e);
  // Frees the request's KV (scheduler and proposer), unless a broken invariant made the engine stop trusting it.
  void release_kv(Sequence& seq);
  void post_process(Sequence& seq, const float* logits);  // choose_token, then emit_token
  // Samples the next token (grammar mask, the sampler chain) and advances the sampler and grammar with it; -1 when
  // the request ended instead (its grammar allows nothing here).
  int32_t choose_token(Sequence& seq, const float* logits);
  // choose_token's two halves around the draw: the logits to sample from (the grammar's mask applied; null when the
  // request ended instead), and advancing the sampler and grammar with the chosen token (-1 when that ended it).
  const float* sampling_logits(Sequence& seq, const float* logits);
  int32_t commit_token(Sequence& seq, int32_t token);
  // Appends the chosen token, streams it, and ends the request on a stop condition.
  void emit_token(Sequence& seq, int32_t token, const float* logits);
  // Speculative decoding: this step's guesses for the running requests that decode (Sequence::draft).
  void propose_drafts();
  // A chunk that verified proposed tokens: samples from its rows in order while the sampled token is the proposed
  // one (so what is sampled is exactly what plain decoding samples), or, for guesses drawn from a draft model's
  // distribution, accepts each by the min(1, p/q) rule; then gives back the rejected guesses' KV.
  void verify_draft(Sequence& seq, const ScheduledChunk& chunk, size_t first_row);
  // The token at a row of a sampled request's drawn guess: the guess if the rule accepts it, else its replacement.
  int32_t verify_drawn_guess(Sequence& seq, const float* logits, size_t i, bool& accepted);
  // Embedding requests (engine_embedding.cpp): the step's hidden states of an embedding chunk, from row `first_row`
  // of the runner's; returns how many rows it took. The chunk that completes the prompt finishes the request with
  // its vector.
  size_t pool_embedding(Sequence& seq, const ScheduledChunk& chunk, size_t first_row);
  // Request::fork_of: the sequence a new request parks on (nullptr: schedule it on its own).
  Sequence* fork_parent_for(const Sequence& seq);
  // The parent's prompt is computed (logits: its last row): its parked children fork its KV and sample.
  void start_forks(Sequence& parent, const float* logits, std::vector<RequestId>& done);
  void finish(Sequence& seq, FinishReason reason, RequestOutput& out);
  std::unique_ptr<Sequence> make_sequence(RequestId id, Request request, OutputCallback cb);
  void publish_stats();
  // LoRA adapters (engine_adapters.cpp). On the engine thread, between steps: run the queued loads and frees; give
  // a new request its LoraSet index (a scaled copy for a per-request scale) and prefix-cache key; let a finished
  // one's adapter go (freeing it when it was unloaded and this was its last request).
  void run_adapter_commands();
  void attach_adapter(Sequence& seq);
  void release_adapter(Sequence& seq);
  // On the submitting thread, under mutex_: why the request may not use its adapter (nullopt: it may).
  std::optional<std::string> refuse_adapter(const Request& request) const;
  // The end of a load's refusal for want of adapter memory: which flags size it.
  std::string lora_budget_advice() const;

  model::Model& model_;
  const tokenizer::Tokenizer& tokenizer_;
  EngineConfig config_;
  int64_t n_blocks_;
  int64_t n_window_blocks_;
  GrammarMaskers grammar_maskers_;  // engine thread only
  model::KvStorage storage_;
  kv::KVCacheManager kv_;
  ThreadPool pool_;
  Scheduler scheduler_;
  ModelRunner runner_;
  std::vector<int32_t> eog_ids_;
  std::shared_ptr<Proposer> proposer_;  // null: no speculation
  const DraftModelProposer* draft_proposer_ = nullptr;  // proposer_ when it is a draft model (memory_summary)
  SpeculationGate speculation_gate_;

  // Engine-thread state.
  std::unordered_map<RequestId, std::unique_ptr<Sequence>> seqs_;
  int64_t prompt_tokens_total_ = 0;
  int64_t generation_tokens_total_ = 0;
  double weight_gbps_ = 0;
  int64_t spec_drafts_ = 0, spec_draft_tokens_ = 0, spec_accepted_ = 0;
  std::vector<int64_t> spec_accepted_per_pos_;
  // Set by fail_broken_invariant: the block pool's state is suspect, so finishing a request leaves it alone (no
  // request will ever allocate from it again).
  bool kv_broken_ = false;

  ScaledAdapters scaled_adapters_;  // engine thread only
  int first_scaled_index_ = 1;      // scaled copies take LoraSet indices from here, above every adapter id

  // Shared with clients, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::vector<std::unique_ptr<Sequence>> inbox_;
  std::vector<RequestId> aborts_;
  EngineStats stats_;
  int n_active_ = 0;  // submitted and not yet finished
  RequestId next_id_ = 1;
  bool accepting_ = true;
  bool stop_ = false;
  bool abort_all_ = false;
  std::string failure_;  // non-empty once the device has failed or an invariant broke
  AdapterSlots adapter_slots_;
  // Queued for the engine thread: free adapter free_id (> 0), or upload `adapter` and answer through `done`.
  struct AdapterCommand {
    int free_id = 0;
    std::shared_ptr<model::lora::PreparedAdapter> adapter;
    std::shared_ptr<std::promise<Result<LoadedAdapter>>> done;
    uint64_t bytes = 0;  // the load's reserved device bytes
  };
  std::vector<AdapterCommand> adapter_commands_;
  FailureKind failure_kind_ = FailureKind::None;
  std::thread thread_;
};

}  // namespace kairo::engine
