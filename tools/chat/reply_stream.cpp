#include "chat/reply_stream.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <variant>

namespace kairo::tools::chat {
namespace {

// How often a stop request is looked for while no output comes: well under what a person notices.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// Outputs handed from the engine thread to the streaming thread. Owned jointly with the callback, which the engine may
// destroy (on its thread) after stream_reply has returned.
struct Mailbox {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<engine::RequestOutput> outputs;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ReplyEnd stream_reply(engine::EngineClient& engine, engine::Request request,
                      const std::function<void(std::string_view)>& on_text,
                      const std::function<bool()>& stop_requested) {
  const auto t0 = std::chrono::steady_clock::now();
  auto mailbox = std::make_shared<Mailbox>();
  ReplyEnd end;
  auto submitted = engine.submit(std::move(request), [mailbox](const engine::RequestOutput& out) {
    std::lock_guard<std::mutex> lock(mailbox->mutex);
    mailbox->outputs.push_back(out);
    mailbox->ready.notify_one();
  });
  if (auto* rejected = std::get_if<engine::SubmitRejection>(&submitted)) {
    end.error = rejected->message;
    return end;
  }
  const engine::RequestId id = std::get<engine::RequestId>(submitted);
  for (bool finished = false; !finished;) {
    std::deque<engine::RequestOutput> batch;
    {
      std::unique_lock<std::mutex> lock(mailbox->mutex);
      mailbox->ready.wait_for(lock, kPollInterval, [&] { return !mailbox->outputs.empty(); });
      batch.swap(mailbox->outputs);
    }
    for (const engine::RequestOutput& out : batch) {
      if (!out.text_delta.empty()) on_text(out.text_delta);
      if (!out.finished) continue;
      finished = true;
      end.reason = out.finish_reason;
      end.error = out.error;
      end.n_prompt_tokens = out.n_prompt_tokens;
      end.n_cached_prompt_tokens = out.n_cached_prompt_tokens;
      end.n_generated_tokens = out.n_generated_tokens;
      end.first_token_seconds = out.queue_seconds + out.prefill_seconds;
    }
    if (!finished && !end.stopped && stop_requested()) {
      end.stopped = true;
      engine.abort(id);  // the engine answers with a final output (FinishReason::Abort)
    }
  }
  end.seconds = seconds_since(t0);
  return end;
}

}  // namespace kairo::tools::chat
