#pragma once
// An EngineClient for the server tests: a thread that, each step, gives every active request one deterministic
// token (see token_at), applies max_tokens / stop strings / stop tokens, streams text deltas through the real
// tokenizer, and honours abort within one step, like the real engine. It also checks every submitted request (the
// server must never pass anything invalid), and can be stepped by hand so tests control timing exactly.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_client.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server::testing {

struct FakeEngineConfig {
  int context_length = 256;
  int max_active = 64;          // submits beyond this many unfinished requests get QueueFull
  int max_running = 8;          // stats: the rest count as waiting
  int64_t kv_capacity_tokens = 4096;
  bool manual = false;          // steps only on step(); otherwise as fast as possible (plus step_delay)
  std::chrono::microseconds step_delay{0};
  int eos_after = -1;           // >= 0: the token at this index is the tokenizer's EOS (finish "stop")
  // How long the engine thread keeps a step's callbacks (and what they hold) after calling them: the real engine
  // drops them at a time of its own, possibly after the Server is gone.
  std::chrono::milliseconds callback_release_delay{0};
};

class FakeEngine final : public engine::EngineClient {
 public:
  FakeEngine(const tokenizer::Tokenizer& tokenizer, FakeEngineConfig config);
  ~FakeEngine() override;

  std::variant<engine::RequestId, engine::SubmitRejection> submit(engine::Request request,
                                                                  engine::OutputCallback on_output) override;
  void abort(engine::RequestId id) override;
  engine::EngineStats stats() const override;
  int context_length() const override { return config_.context_length; }
  int n_vocab() const override { return tokenizer_.n_vocab(); }
  std::string failure() const override;
  engine::EngineFailure failure_state() const override;
  // As the real engine when its device is lost (or, with another kind, when memory ran out or an invariant broke):
  // every active request ends with Abort carrying `error`, and failure() and new submissions report it.
  void fail_device(const std::string& error, engine::FailureKind kind = engine::FailureKind::DeviceLost);

  // The k-th token the fake generates for a prompt with this seed (0 when unseeded): a plain text piece.
  static int32_t token_at(const std::vector<int32_t>& prompt, uint64_t seed, int k, int32_t n_vocab);
  static constexpr int32_t kFirstTextToken = 259;  // aidreams: 0-2 special, 3-258 byte tokens
  // The j-th alternative reported with `token` when logprobs are asked for (logprob -0.5 * (j + 1)).
  static int32_t top_token(int32_t token, int j, int32_t n_vocab) {
    return kFirstTextToken + (token + 1 + j) % (n_vocab - kFirstTextToken);
  }  // aidreams: 0-2 special, 3-258 byte tokens

  // Manual mode: runs n steps on the engine thread and waits for them.
  void step(int n = 1);
  // Waits (up to `timeout`) for the predicate over the recorded state; true if it held.
  bool wait_for(const std::function<bool(const FakeEngine&)>& pred,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) const;

  std::vector<engine::Request> submitted() const;
  std::vector<engine::RequestId> aborted() const;
  int n_active() const;
  int n_invalid() const { return n_invalid_.load(); }  // submitted requests that broke the contract

 private:
  struct Active {
    engine::RequestId id;
    engine::Request request;
    engine::OutputCallback callback;
    std::vector<int32_t> generated;
    std::string text;   // all text so far (before stop truncation)
    size_t n_emitted = 0;  // bytes of text sent
    bool abort = false;
    std::string error;  // set with abort by fail_device
  };
  void loop();
  void run_step(std::vector<std::pair<engine::OutputCallback, engine::RequestOutput>>& outbox);
  std::string check(const engine::Request& r) const;

  const tokenizer::Tokenizer& tokenizer_;
  FakeEngineConfig config_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::deque<Active> active_;
  std::vector<engine::Request> submitted_;
  std::vector<engine::RequestId> aborted_;
  engine::RequestId next_id_ = 1;
  int pending_steps_ = 0;
  int64_t steps_done_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  std::atomic<int> n_invalid_{0};
  bool stop_ = false;
  std::string failure_;
  engine::FailureKind failure_kind_ = engine::FailureKind::None;
  std::thread thread_;
};

}  // namespace kairo::server::testing
