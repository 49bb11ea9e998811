#include "fake_engine.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/format.h"

namespace kairo::server::testing {

using engine::FinishReason;
using engine::RequestOutput;

FakeEngine::FakeEngine(const tokenizer::Tokenizer& tokenizer, FakeEngineConfig config)
    : tokenizer_(tokenizer), config_(config) {
  thread_ = std::thread([this] { loop(); });
}

FakeEngine::~FakeEngine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int32_t FakeEngine::token_at(const std::vector<int32_t>& prompt, uint64_t seed, int k, int32_t n_vocab) {
  uint64_t h = seed * 1000003u;
  for (int32_t t : prompt) h = h * 31 + static_cast<uint64_t>(t);
  const uint64_t span = static_cast<uint64_t>(n_vocab - kFirstTextToken);
  return kFirstTextToken + static_cast<int32_t>((h + 7919u * static_cast<uint64_t>(k)) % span);
}

std::string FakeEngine::check(const engine::Request& r) const {
  const int n_vocab = tokenizer_.n_vocab();
  if (r.prompt_tokens.empty()) return "empty prompt";
  for (int32_t t : r.prompt_tokens) {
    if (t < 0 || t >= n_vocab) return strprintf("prompt token %d out of range", t);
  }
  if (r.stop.max_tokens < 1) return "max_tokens < 1";
  if (static_cast<int64_t>(r.prompt_tokens.size()) + r.stop.max_tokens > config_.context_length) {
    return "prompt + max_tokens beyond the context";
  }
  for (const auto& [t, b] : r.sampling.logit_bias) {
    if (t < 0 || t >= n_vocab || !std::isfinite(b)) return "bad logit_bias";
  }
  for (int32_t t : r.stop.stop_token_ids) {
    if (t < 0 || t >= n_vocab) return "bad stop token";
  }
  for (const auto& s : r.stop.stop_strings) {
    if (s.empty()) return "empty stop string";
  }
  const auto& s = r.sampling;
  if (!std::isfinite(s.temperature) || s.temperature < 0 || !(s.top_p >= 0 && s.top_p <= 1) || s.top_k < 0 ||
      !(s.min_p >= 0 && s.min_p <= 1) || !(s.repetition_penalty > 0) || !std::isfinite(s.presence_penalty) ||
      !std::isfinite(s.frequency_penalty) || s.n_logprobs > 20) {
    return "bad sampling parameters";
  }
  return "";
}

std::variant<engine::RequestId, engine::SubmitRejection> FakeEngine::submit(engine::Request request,
                                                                            engine::OutputCallback on_output) {
  const std::string problem = check(request);
  std::lock_guard lock(mutex_);
  submitted_.push_back(request);
  if (!failure_.empty()) return engine::SubmitRejection{engine::SubmitError::DeviceFailed, failure_};
  if (!problem.empty()) {
    n_invalid_.fetch_add(1);
    return engine::SubmitRejection{engine::SubmitError::Invalid, problem};
  }
  if (static_cast<int>(active_.size()) >= config_.max_active) {
    return engine::SubmitRejection{engine::SubmitError::QueueFull,
                                   strprintf("%d requests are queued", config_.max_active)};
  }
  const engine::RequestId id = next_id_++;
  active_.push_back(Active{id, std::move(request), std::move(on_output), {}, {}, 0, false, {}});
  cv_.notify_all();
  return id;
}

void FakeEngine::abort(engine::RequestId id) {
  std::lock_guard lock(mutex_);
  aborted_.push_back(id);
  for (auto& a : active_) {
    if (a.id == id) a.abort = true;
  }
  cv_.notify_all();
}

engine::EngineStats FakeEngine::stats() const {
  std::lock_guard lock(mutex_);
  engine::EngineStats s;
  const int n = static_cast<int>(active_.size());
  s.n_running = std::min(n, config_.max_running);
  s.n_waiting = n - s.n_running;
  int64_t used = 0;
  for (const auto& a : active_) used += static_cast<int64_t>(a.request.prompt_tokens.size() + a.generated.size());
  s.kv_usage = static_cast<double>(used) / static_cast<double>(config_.kv_capacity_tokens);
  s.prompt_tokens = prompt_tokens_;
  s.generation_tokens = generation_tokens_;
  return s;
}

void FakeEngine::step(int n) {
  std::unique_lock lock(mutex_);
  const int64_t target = steps_done_ + n;
  pending_steps_ += n;
  cv_.notify_all();
  cv_.wait(lock, [&] { return steps_done_ >= target || stop_; });
}

bool FakeEngine::wait_for(const std::function<bool(const FakeEngine&)>& pred, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred(*this)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred(*this);
}

std::string FakeEngine::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

engine::EngineFailure FakeEngine::failure_state() const {
  std::lock_guard lock(mutex_);
  return {failure_kind_, failure_};
}

void FakeEngine::fail_device(const std::string& error, engine::FailureKind kind) {
  std::lock_guard lock(mutex_);
  failure_ = error;
  failure_kind_ = kind;
  for (Active& a : active_) {
    a.abort = true;
    a.error = error;
  }
  cv_.notify_all();
}

std::vector<engine::Request> FakeEngine::submitted() const {
  std::lock_guard lock(mutex_);
  return submitted_;
}

std::vector<engine::RequestId> FakeEngine::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

int FakeEngine::n_active() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(active_.size());
}

void FakeEngine::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] {
      if (stop_) return true;
      const bool any_abort = std::any_of(active_.begin(), active_.end(), [](const Active& a) { return a.abort; });
      if (any_abort) return true;
      return config_.manual ? pending_steps_ > 0 : !active_.empty();
    });
    if (stop_) return;
    const bool stepping = config_.manual ? pending_steps_ > 0 : true;
    std::vector<std::pair<engine::OutputCallback, RequestOutput>> outbox;
    if (stepping) {
      run_step(outbox);
    } else {
      // Aborts only (manual mode between steps): served at once, like the engine's next step would.
      for (auto it = active_.begin(); it != active_.end();) {
        if (it->abort) {
          RequestOutput out;
          out.id = it->id;
          out.finished = true;
          out.finish_reason = FinishReason::Abort;
          out.error = it->error;
          out.n_prompt_tokens = static_cast<int>(it->request.prompt_tokens.size());
          out.n_generated_tokens = static_cast<int>(it->generated.size());
          outbox.emplace_back(std::move(it->callback), std::move(out));
          it = active_.erase(it);
        } else {
          ++it;
        }
      }
    }
    lock.unlock();
    for (auto& [cb, out] : outbox) cb(out);
    if (!outbox.empty() && config_.callback_release_delay.count() > 0) {
      std::this_thread::sleep_for(config_.callback_release_delay);
    }
    outbox.clear();  // callbacks (and what they hold) die on the engine thread, as with the real engine
    if (!config_.manual && config_.step_delay.count() > 0) std::this_thread::sleep_for(config_.step_delay);
    lock.lock();
    if (stepping) {
      if (config_.manual) --pending_steps_;
      ++steps_done_;
      cv_.notify_all();
    }
  }
}

void FakeEngine::run_step(std::vector<std::pair<engine::OutputCallback, RequestOutput>>& outbox) {
  const int32_t n_vocab = tokenizer_.n_vocab();
  for (auto it = active_.begin(); it != active_.end();) {
    Active& a = *it;
    RequestOutput out;
    out.id = a.id;
    out.n_prompt_tokens = static_cast<int>(a.request.prompt_tokens.size());
    if (a.abort) {
      out.finished = true;
      out.finish_reason = FinishReason::Abort;
      out.error = a.error;
    } else {
      const int k = static_cast<int>(a.generated.size());
      if (k == 0) {
        prompt_tokens_ += out.n_prompt_tokens;
        // A prompt seen before counts as served from the prefix cache, in whole 16-token blocks.
        const auto& p = a.request.prompt_tokens;
        const int n_seen = static_cast<int>(std::count_if(submitted_.begin(), submitted_.end(),
                                                          [&](const engine::Request& r) { return r.prompt_tokens == p; }));
        if (n_seen > 1) out.n_cached_prompt_tokens = static_cast<int>((p.size() - 1) / 16 * 16);
      }
      const bool eos = config_.eos_after == k && !a.request.stop.ignore_eos;
      const int32_t token =
          eos ? tokenizer_.eos_id() : token_at(a.request.prompt_tokens, a.request.sampling.seed.value_or(0), k, n_vocab);
      a.generated.push_back(token);
      ++generation_tokens_;
      engine::GeneratedToken g;
      g.token = token;
      if (a.request.sampling.n_logprobs >= 0) {
        g.logprob = -0.25f * static_cast<float>(k + 1);
        for (int j = 0; j < a.request.sampling.n_logprobs; ++j) {
          g.top_logprobs.push_back({top_token(token, j, n_vocab), -0.5f * static_cast<float>(j + 1)});
        }
      }
      out.tokens.push_back(g);
      const auto& stop_ids = a.request.stop.stop_token_ids;
      const bool stop_token = eos || std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
      if (!stop_token) a.text += tokenizer_.token_to_piece(token);

      size_t stop_pos = std::string::npos;
      for (const auto& s : a.request.stop.stop_strings) {
        const size_t pos = a.text.find(s);
        if (pos != std::string::npos && pos < stop_pos) {
          stop_pos = pos;
          out.stop_reason = s;
        }
      }
      size_t emit_to = a.text.size();
      if (stop_pos != std::string::npos) {
        emit_to = stop_pos;
        out.finished = true;
        out.finish_reason = FinishReason::Stop;
      } else if (stop_token) {
        out.finished = true;
        out.finish_reason = FinishReason::Stop;
      } else if (static_cast<int>(a.generated.size()) >= a.request.stop.max_tokens) {
        out.finished = true;
        out.finish_reason = FinishReason::Length;
      } else {
        // Hold back what could still become a stop string.
        size_t hold = 0;
        for (const auto& s : a.request.stop.stop_strings) hold = std::max(hold, s.size() - 1);
        emit_to = a.text.size() > hold ? a.text.size() - hold : 0;
      }
      if (emit_to > a.n_emitted) {
        out.text_delta = a.text.substr(a.n_emitted, emit_to - a.n_emitted);
        a.n_emitted = emit_to;
      }
    }
    out.n_generated_tokens = static_cast<int>(a.generated.size());
    if (out.finished) {
      outbox.emplace_back(std::move(a.callback), std::move(out));
      it = active_.erase(it);
    } else {
      outbox.emplace_back(a.callback, std::move(out));
      ++it;
    }
  }
}

}  // namespace kairo::server::testing
