#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <system_error>

#include "core/format.h"
#include "core/out_of_memory.h"
#include "sampling/logprobs.h"

namespace kairo::engine {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::None: return "none";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
  }
  return "none";
}

namespace {

sampling::SamplingConfig to_sampling_config(const SamplingParams& p) {
  sampling::SamplingConfig c;
  c.temperature = p.temperature;
  c.top_k = p.top_k;
  c.top_p = p.top_p;
  c.min_p = p.min_p;
  c.repetition_penalty = p.repetition_penalty;
  c.presence_penalty = p.presence_penalty;
  c.frequency_penalty = p.frequency_penalty;
  c.penalty_last_n = -1;  // OpenAI penalties count every generated token
  c.seed = p.seed ? *p.seed : sampling::kRandomSeed;
  c.logit_bias = p.logit_bias;
  return c;
}

int64_t blocks_for(int64_t n_tokens, int block_size) { return (n_tokens + block_size - 1) / block_size; }

// The adapters the model has when the engine starts, and the device bytes of each (AdapterSlots' byte budget).
std::vector<int> loaded_adapter_ids(const model::lora::LoraSet& set) {
  std::vector<int> ids;
  for (int idx = 1; idx <= set.size(); ++idx)
    if (set.in_use(idx)) ids.push_back(idx);
  return ids;
}
std::vector<uint64_t> loaded_adapter_bytes(const model::lora::LoraSet& set) {
  std::vector<uint64_t> bytes;
  for (int idx : loaded_adapter_ids(set)) bytes.push_back(set.at(idx).matrices->device_bytes);
  return bytes;
}

}  // namespace

Engine::Engine(model::Model& model, const tokenizer::Tokenizer& tokenizer, EngineConfig config,
               model::KvStorage storage, int64_t n_blocks, int64_t n_window_blocks, model::KvStorage draft_storage)
    : model_(model),
      tokenizer_(tokenizer),
      config_(config),
      n_blocks_(n_blocks),
      n_window_blocks_(n_window_blocks),
      grammar_maskers_(tokenizer, tokenizer.eog_ids()),
      storage_(std::move(storage)),
      kv_(kv::KVCacheConfig{static_cast<int32_t>(n_blocks + 1), config.block_size, config.enable_prefix_caching,
                            kv::hash_block_tokens, n_window_blocks > 0 ? model.config().sliding_window : 0,
                            static_cast<int32_t>(n_window_blocks > 0 ? n_window_blocks + 1 : 0)}),
      pool_(config.n_threads > 0 ? config.n_threads : ThreadPool::available_cores()),
      scheduler_(config.scheduler, kv_),
      runner_(model_, storage_, kv_, pool_),
      adapter_slots_(loaded_adapter_ids(model.adapters()), config.max_loras, config.max_lora_bytes,
                     loaded_adapter_bytes(model.adapters())) {
  first_scaled_index_ = std::max(adapter_slots_.max_loaded(), model_.adapters().size()) + 1;
  for (int32_t id = 0; id < tokenizer_.n_vocab(); ++id) {
    if (tokenizer_.is_eog(id)) eog_ids_.push_back(id);
  }
  stats_.n_kv_blocks_total = n_blocks_;
  switch (config_.speculative.method) {
    case SpeculativeMethod::None: break;
    case SpeculativeMethod::Ngram: proposer_ = std::make_shared<NgramProposer>(config_.speculative.ngram); break;
    case SpeculativeMethod::DraftModel: {
      auto draft = std::make_shared<DraftModelProposer>(*config_.speculative.draft_model, std::move(draft_storage), pool_);
      draft_proposer_ = draft.get();
      proposer_ = std::move(draft);
      break;
    }
    case SpeculativeMethod::Custom: proposer_ = config_.speculative.custom; break;
  }
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    accepting_ = false;
  }
  wake_.notify_all();
  thread_.join();
}

std::string Engine::memory_summary() const {
  const int ctx = config_.max_model_len;
  std::string s = strprintf("KV cache: %lld tokens (%s, %s, %lld blocks of %d), max concurrency %.1f at context %d",
                            static_cast<long long>(kv_capacity_tokens()), human_bytes(kv_bytes()).c_str(),
                            std::string(dtype_name(config_.kv_dtype)).c_str(), static_cast<long long>(n_blocks_),
                            config_.block_size,
                            static_cast<double>(n_blocks_) / static_cast<double>(blocks_for(ctx, config_.block_size)),
                            ctx);
  if (draft_proposer_) {
    s += strprintf("; the draft model's KV: %lld tokens (%s)", static_cast<long long>(draft_proposer_->kv_tokens()),
                   human_bytes(draft_proposer_->kv_bytes()).c_str());
  }
  if (n_window_blocks_ > 0) {
    s += strprintf("; the %d sliding-window layers hold %lld blocks (window %d, behind it freed)",
                   model_.config().n_windowed_layers(), static_cast<long long>(n_window_blocks_),
                   model_.config().sliding_window);
  }
  return s;
}

std::variant<RequestId, SubmitRejection> Engine::submit(Request request, OutputCallback on_output) {
  const model::ModelConfig& c = model_.config();
  if (request.prompt_tokens.empty()) return SubmitRejection{SubmitError::Invalid, "the prompt is empty"};
  for (int32_t t : request.prompt_tokens) {
    if (t < 0 || t >= c.n_vocab) {
      return SubmitRejection{SubmitError::Invalid,
                             strprintf("prompt token id %d is outside the vocabulary (0..%d)", t, c.n_vocab - 1)};
    }
  }
  if (request.embedding != EmbeddingPooling::None) {  // nothing is sampled: none of the generation fields apply
    request.stop = StopConditions{};
    request.stop.max_tokens = 0;
    request.sampling = SamplingParams{};
    request.sampling.temperature = 0.0f;  // exact numerics: the vector never depends on the rest of the batch
    request.grammar.reset();
    request.fork_of = 0;
    request.speculative = false;
  }
  if (request.stop.max_tokens < 0) return SubmitRejection{SubmitError::Invalid, "max_tokens must be >= 0"};
  const int64_t total = static_cast<int64_t>(request.prompt_tokens.size()) + request.stop.max_tokens;
  if (total > config_.max_model_len) {
    return SubmitRejection{SubmitError::TooLong,
                           strprintf("this model's maximum context length is %d tokens, but %zu prompt tokens + %d "
                                     "max_tokens = %lld; shorten the prompt or lower max_tokens",
                                     config_.max_model_len, request.prompt_tokens.size(), request.stop.max_tokens,
                                     static_cast<long long>(total))};
  }
  const Status valid = sampling::validate_config(to_sampling_config(request.sampling), c.n_vocab);
  if (!valid.ok()) return SubmitRejection{SubmitError::Invalid, valid.error().message};
  if (request.adapter_scale && !(std::isfinite(*request.adapter_scale) && *request.adapter_scale >= 0.0f)) {
    return SubmitRejection{SubmitError::Invalid, strprintf("the LoRA scale %g is not a finite number >= 0",
                                                           static_cast<double>(*request.adapter_scale))};
  }

  std::lock_guard<std::mutex> lock(mutex_);
  if (auto why = refuse_adapter(request)) return SubmitRejection{SubmitError::Invalid, std::move(*why)};
  if (!failure_.empty()) return SubmitRejection{SubmitError::DeviceFailed, failure_};
  if (!accepting_) return SubmitRejection{SubmitError::ShuttingDown, "the server is shutting down"};
  if (stats_.n_waiting + static_cast<int>(inbox_.size()) >= config_.max_waiting) {
    return SubmitRejection{SubmitError::QueueFull,
                           strprintf("the request queue is full (%d waiting); retry later", config_.max_waiting)};
  }
  const RequestId id = next_id_++;
  if (request.adapter_scale && *request.adapter_scale == 0.0f) request.adapter = 0;  // no delta: exactly the base
  if (request.adapter == 0) request.adapter_scale.reset();
  adapter_slots_.acquire(request.adapter);  // released when the request finishes (release_adapter)
  inbox_.push_back(make_sequence(id, std::move(request), std::move(on_output)));
  ++n_active_;
  wake_.notify_one();
  return id;
}

std::unique_ptr<Sequence> Engine::make_sequence(RequestId id, Request request, OutputCallback cb) {
  auto seq = std::make_unique<Sequence>();
  seq->id = id;
  seq->tokens = request.prompt_tokens;
  seq->n_prompt = static_cast<int>(request.prompt_tokens.size());
  seq->sampler = sampling::SamplerChain::from_config(to_sampling_config(request.sampling));
  seq->decoder = std::make_unique<tokenizer::IncrementalDecoder>(tokenizer_);
  seq->stop = std::make_unique<StopMatcher>(request.stop.stop_strings);
  seq->exact_numerics = config_.exact_numerics || request.sampling.temperature <= 0.0f;
  seq->kv_salt = seq->exact_numerics ? request.cache_salt : request.cache_salt + std::string("\0relaxed", 8);
  // Mean and CLS pooling need the hidden state of every prompt token (or the first), which a prefix-cache hit would
  // skip: a key of their own keeps them from reusing cached KV. Last-token pooling computes its last token anyway.
  if (request.embedding == EmbeddingPooling::Mean || request.embedding == EmbeddingPooling::Cls)
    seq->kv_salt += strprintf("%cembedding %llu", '\0', static_cast<unsigned long long>(id));
  seq->request = std::move(request);
  seq->on_output = std::move(cb);
  seq->arrival = Clock::now();
  seq->spec_k = config_.speculative.num_tokens;
  if (config_.speculative.method == SpeculativeMethod::DraftModel && !seq->exact_numerics) {
    // A sampled request's draft guesses are drawn (DraftModelProposer), with a stream of their own seeded from the
    // request's seed. Not under exact numerics: there the guesses stay the draft's argmax, verified by sampling and
    // comparing, so speculation (which the gate turns on and off by measured time) never changes a seeded output.
    seq->draft_filters = std::make_unique<sampling::SamplerChain>(
        sampling::SamplerChain::draft_filters(to_sampling_config(seq->request.sampling)));
    seq->spec_rng.seed(seq->sampler.seed() ^ 0x9e3779b97f4a7c15ull);
  }
  return seq;
}

void Engine::abort(RequestId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  aborts_.push_back(id);
  wake_.notify_one();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void Engine::stop_accepting() {
  std::lock_guard<std::mutex> lock(mutex_);
  accepting_ = false;
}

bool Engine::drain(double timeout_seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool drained = idle_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                                      [this] { return n_active_ == 0; });
  if (drained) return true;
  abort_all_ = true;  // seqs_ belongs to the engine thread: let it abort everything
  wake_.notify_one();
  idle_.wait_for(lock, std::chrono::seconds(5), [this] { return n_active_ == 0; });
  return false;
}

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] {
        return stop_ || abort_all_ || !inbox_.empty() || !aborts_.empty() || !seqs_.empty() ||
               !adapter_commands_.empty();
      });
      if (stop_) break;
    }
    // A broken invariant is a bug, not a reason to take the server down: it fails what is in flight, and the
    // server stays up to say why (anything else thrown here is as fatal as before).
    try {
      take_inbox();
      if (!seqs_.empty()) step();
    } catch (const InvariantViolation& e) {
      fail_broken_invariant(e);
    }
    publish_stats();
  }
  // Shutting down: every request still here ends with Abort so no client waits forever.
  try {
    take_inbox();
    for (auto& [id, seq] : seqs_) {
      if (seq->status == SeqStatus::Finished) continue;  // ended by a finish() that then threw
      RequestOutput out;
      finish(*seq, FinishReason::Abort, out);
    }
  } catch (const InvariantViolation& e) {
    fail_broken_invariant(e);
  }
  seqs_.clear();
}

void Engine::take_inbox() {
  run_adapter_commands();
  std::vector<std::unique_ptr<Sequence>> incoming;
  std::vector<RequestId> aborts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming.swap(inbox_);
    aborts.swap(aborts_);
    if (abort_all_) {
      abort_all_ = false;
      for (const auto& seq : incoming) aborts.push_back(seq->id);
      for (const auto& [id, seq] : seqs_) aborts.push_back(id);
    }
  }
  for (auto& seq : incoming) {
    Sequence* s = seq.get();
    attach_adapter(*s);
    seqs_[s->id] = std::move(seq);
    if (Sequence* parent = fork_parent_for(*s)) {
      s->fork_parent = parent;
      parent->forks.push_back(s);
    } else {
      scheduler_.add(s);
    }
  }
  for (RequestId id : aborts) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) continue;
    RequestOutput out;
    finish(*it->second, FinishReason::Abort, out);
    seqs_.erase(it);
  }
}

Sequence* Engine::fork_parent_for(const Sequence& seq) {
  if (seq.request.fork_of == 0) return nullptr;
  const auto it = seqs_.find(seq.request.fork_of);
  if (it == seqs_.end()) return nullptr;
  Sequence* parent = it->second.get();
  // Only a parent whose prompt is still to be computed, itself not parked, with exactly this prompt and salt.
  if (parent->status == SeqStatus::Finished || parent->fork_parent != nullptr || parent->n_generated() != 0) {
    return nullptr;
  }
  if (parent->tokens != seq.tokens || parent->kv_salt != seq.kv_salt) return nullptr;
  return parent;
}

void Engine::start_forks(Sequence& parent, const float* logits, std::vector<RequestId>& done) {
  std::vector<Sequence*> forks;
  forks.swap(parent.forks);
  for (Sequence* child : forks) {
    child->fork_parent = nullptr;
    if (scheduler_.n_running() >= scheduler_.config().max_num_seqs) {
      scheduler_.add(child);  // no room to run it now: it waits and reuses the prompt's full blocks from the cache
      continue;
    }
    kv_.fork(parent.id, child->id);
    child->n_computed = parent.n_computed;  // the whole prompt: its KV is the parent's
    child->n_cached_prompt = child->n_prompt;  // none of it was computed for this request
    child->first_scheduled = parent.first_scheduled;
    scheduler_.add_running(child);
    post_process(*child, logits);  // its own sampler, the same logits
    if (child->status == SeqStatus::Finished) done.push_back(child->id);
  }
}

void Engine::step() {
  const auto t0 = Clock::now();
  propose_drafts();
  StepPlan plan = scheduler_.schedule();
  if (plan.empty()) {
    // Nothing fits even though the pool should hold any single admitted request: refuse the head of the queue
    // rather than spin.
    if (scheduler_.n_running() == 0 && !seqs_.empty()) {
      for (auto it = seqs_.begin(); it != seqs_.end(); ++it) {
        if (it->second->status != SeqStatus::Waiting || it->second->fork_parent != nullptr) continue;
        RequestOutput out;
        finish(*it->second, FinishReason::Abort, out);
        seqs_.erase(it);
        break;
      }
    }
    return;
  }
  for (const ScheduledChunk& c : plan.chunks) {
    if (c.seq->n_computed == c.start && c.start < c.seq->n_prompt) {
      prompt_tokens_total_ += std::min(c.n_new, c.seq->n_prompt - c.start);
    }
    if (c.seq->first_scheduled == Clock::time_point{}) c.seq->first_scheduled = t0;
  }
  try {
    runner_.run(plan);
  } catch (const InvariantViolation&) {
    throw;  // a bookkeeping bug, not the device's: loop() handles it
  } catch (const kernels::DeviceLost& e) {
    fail_all(strprintf("the device %s failed (%s): requests cannot run on it any more; restart the server",
                       model_.device().name().c_str(), e.what()));
    return;
  } catch (const std::bad_alloc& e) {  // host memory of the step (kernel scratch, batch arrays) ran out
    fail_all(strprintf("a step of %lld tokens ran out of memory on %s: %s%s; lower --max-num-batched-tokens or "
                       "--max-num-seqs, or give the server more memory (kairo plan predicts what fits)",
                       static_cast<long long>(plan.n_tokens), model_.device().name().c_str(),
                       describe_allocation_failure(e).c_str(), address_space_limit_note().c_str()),
             FailureKind::OutOfMemory);
    return;
  } catch (const StepOutOfMemory& e) {  // a step's buffers did not fit on the device
    fail_all(strprintf("a step of %lld tokens did not fit on %s: %s; lower --max-num-batched-tokens or "
                       "--max-num-seqs (kairo plan predicts what fits)",
                       static_cast<long long>(plan.n_tokens), model_.device().name().c_str(), e.what()),
             FailureKind::OutOfMemory);
    return;
  } catch (const std::exception& e) {
    fail_all(strprintf("a step failed on %s: %s", model_.device().name().c_str(), e.what()));
    return;
  }
  scheduler_.complete(plan);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (proposer_) {
    // Decode-only steps give the T(n) the gate weighs; the others (prompt chunks) what it estimates a larger one from.
    const bool decode_only = std::all_of(plan.chunks.begin(), plan.chunks.end(), [](const ScheduledChunk& c) {
      return c.needs_sample && c.n_new == 1 + c.n_draft && c.seq->n_generated() > 0;
    });
    speculation_gate_.observe_step(plan.n_tokens, seconds, decode_only);
  }
  const double gbps = static_cast<double>(model_.weights().n_bytes) / std::max(seconds, 1e-9) / 1e9;
  weight_gbps_ = weight_gbps_ == 0 ? gbps : 0.9 * weight_gbps_ + 0.1 * gbps;

  size_t row = 0, hidden_row = 0;
  std::vector<RequestId> done;
  for (const ScheduledChunk& c : plan.chunks) {
    Sequence& seq = *c.seq;
    if (seq.embedding()) {
      hidden_row += pool_embedding(seq, c, hidden_row);
      if (seq.status == SeqStatus::Finished) done.push_back(seq.id);
      continue;
    }
    if (!c.needs_sample) continue;
    if (c.n_draft > 0) {
      verify_draft(seq, c, row);
      row += static_cast<size_t>(1 + c.n_draft);
    } else {
      const float* logits = runner_.logits_row(row++);
      if (!seq.forks.empty()) start_forks(seq, logits, done);
      post_process(seq, logits);
    }
    if (seq.status == SeqStatus::Finished) done.push_back(seq.id);
  }
  for (RequestId id : done) seqs_.erase(id);
}

void Engine::post_process(Sequence& seq, const float* logits) {
  const int32_t token = choose_token(seq, logits);
  if (token >= 0) emit_token(seq, token, logits);
}

int32_t Engine::choose_token(Sequence& seq, const float* logits) {
  const float* sample_from = sampling_logits(seq, logits);
  if (!sample_from) return -1;
  return commit_token(seq, seq.sampler.sample(sample_from, model_.config().n_vocab));
}

const float* Engine::sampling_logits(Sequence& seq, const float* logits) {
  const int n_vocab = model_.config().n_vocab;
  if (seq.request.grammar && !seq.grammar) {
    seq.grammar = std::make_unique<GrammarConstraint>(seq.request.grammar, grammar_maskers_.get(seq.request.grammar),
                                                      seq.request.grammar_after_thinking, eog_ids_);
  }
  const float* sample_from = logits;
  if (seq.grammar) {
    sample_from = seq.grammar->mask(logits, n_vocab);
    if (!seq.grammar->any_allowed()) {  // a grammar that can end but whose end no token of this model can say
      RequestOutput out;
      if (!seq.grammar->can_end()) out.error = "the output grammar allows no token of this model's vocabulary here";
      finish(seq, seq.grammar->can_end() ? FinishReason::Stop : FinishReason::Abort, out);
      return nullptr;
    }
  }
  return sample_from;
}

int32_t Engine::commit_token(Sequence& seq, int32_t token) {
  seq.sampler.accept(token);
  if (seq.grammar && !seq.grammar->accept(token)) {  // cannot happen: the token was allowed by the mask
    RequestOutput out;
    out.error = "the sampled token does not continue the output grammar";
    finish(seq, FinishReason::Abort, out);
    return -1;
  }
  return token;
}

void Engine::emit_token(Sequence& seq, int32_t token, const float* logits) {
  const int n_vocab = model_.config().n_vocab;
  seq.tokens.push_back(token);
  ++generation_tokens_total_;
  if (seq.n_generated() == 1) seq.first_token = Clock::now();

  RequestOutput out;
  GeneratedToken gen;
  gen.token = token;
  if (seq.request.sampling.n_logprobs >= 0) {
    gen.logprob = sampling::token_logprob(logits, n_vocab, token);
    if (seq.request.sampling.n_logprobs > 0) {
      for (const auto& t : sampling::top_logprobs(logits, n_vocab, seq.request.sampling.n_logprobs)) {
        gen.top_logprobs.push_back({t.token, t.logprob});
      }
    }
  }
  out.tokens.push_back(gen);

  const StopConditions& stop = seq.request.stop;
  const bool is_eog = std::find(eog_ids_.begin(), eog_ids_.end(), token) != eog_ids_.end();
  const bool is_stop_token = std::find(stop.stop_token_ids.begin(), stop.stop_token_ids.end(), token) !=
                             stop.stop_token_ids.end();
  if ((is_eog && !stop.ignore_eos) || is_stop_token) {
    finish(seq, FinishReason::Stop, out);
    return;
  }
  out.text_delta = seq.stop->push(seq.decoder->push(token));
  if (seq.stop->stopped()) {
    out.stop_reason = seq.stop->matched();
    finish(seq, FinishReason::Stop, out);
    return;
  }
  if (seq.grammar && !seq.grammar->can_continue()) {  // the grammar's text is complete: nothing may follow
    finish(seq, FinishReason::Stop, out);
    return;
  }
  if (seq.n_generated() >= stop.max_tokens || static_cast<int>(seq.tokens.size()) >= config_.max_model_len) {
    finish(seq, FinishReason::Length, out);
    return;
  }
  out.id = seq.id;
  out.n_prompt_tokens = seq.n_prompt;
  out.n_cached_prompt_tokens = seq.n_cached_prompt;
  out.n_generated_tokens = seq.n_generated();
  seq.on_output(out);
}

void Engine::finish(Sequence& seq, FinishReason reason, RequestOutput& out) {
  if (!seq.stop->stopped()) out.text_delta += seq.stop->push(seq.decoder->flush()) + seq.stop->flush();
  out.id = seq.id;
  out.finished = true;
  out.finish_reason = reason;
  out.n_prompt_tokens = seq.n_prompt;
  out.n_cached_prompt_tokens = seq.n_cached_prompt;
  out.n_generated_tokens = seq.n_generated();
  if (seq.first_scheduled != Clock::time_point{}) {
    out.queue_seconds = std::chrono::duration<double>(seq.first_scheduled - seq.arrival).count();
    if (seq.first_token != Clock::time_point{}) {
      out.prefill_seconds = std::chrono::duration<double>(seq.first_token - seq.first_scheduled).count();
    }
  }
  if (seq.fork_parent != nullptr) {  // parked: leave the parent's list
    auto& siblings = seq.fork_parent->forks;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), &seq), siblings.end());
    seq.fork_parent = nullptr;
  }
  for (Sequence* child : seq.forks) {  // the parent ends before its prompt did: the children compute their own
    child->fork_parent = nullptr;
    scheduler_.add(child);
  }
  seq.forks.clear();
  // A broken invariant found while freeing is raised only once this request has its output, which it computed before
  // anything broke: it must neither be lost nor be failed a second time by fail_broken_invariant.
  std::exception_ptr broken;
  try {
    release_kv(seq);
  } catch (const InvariantViolation&) {
    broken = std::current_exception();
  }
  seq.status = SeqStatus::Finished;
  release_adapter(seq);
  publish_stats();  // a client that sees its request finish must also see its blocks freed
  seq.on_output(out);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--n_active_ == 0) idle_.notify_all();
  }
  if (broken) std::rethrow_exception(broken);
}

void Engine::release_kv(Sequence& seq) {
  if (kv_broken_) {
    scheduler_.drop(&seq);
    return;
  }
  scheduler_.remove(&seq);
  if (proposer_) proposer_->release(seq.id);
}

void Engine::publish_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.n_running = scheduler_.n_running();
  stats_.n_waiting = scheduler_.n_waiting();
  stats_.n_kv_blocks_total = n_blocks_;
  stats_.n_kv_blocks_used = static_cast<int64_t>(kv_.usage() * static_cast<double>(n_blocks_) + 0.5);
  stats_.kv_usage = kv_.usage();
  if (kv_.has_window_group()) {
    stats_.n_window_kv_blocks_total = n_window_blocks_;
    stats_.n_window_kv_blocks_used =
        static_cast<int64_t>(kv_.window_pool().usage() * static_cast<double>(n_window_blocks_) + 0.5);
  }
  stats_.n_preemptions = scheduler_.n_preemptions();
  stats_.prefix_cache_queries = kv_.prefix_cache_queries();
  stats_.prefix_cache_hits = kv_.prefix_cache_hits();
  stats_.prompt_tokens = prompt_tokens_total_;
  stats_.generation_tokens = generation_tokens_total_;
  stats_.weight_read_gbps = weight_gbps_;
  stats_.spec_num_drafts = spec_drafts_;
  stats_.spec_num_draft_tokens = spec_draft_tokens_;
  stats_.spec_num_accepted_tokens = spec_accepted_;
  stats_.spec_num_accepted_tokens_per_pos = spec_accepted_per_pos_;
  if (draft_proposer_) stats_.draft_kv_usage = draft_proposer_->kv_usage();
}

}  // namespace kairo::engine
