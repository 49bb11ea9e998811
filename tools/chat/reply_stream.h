#pragma once
// One reply from the engine, streamed on the calling thread. The engine's callbacks (on its own thread) only queue
// the outputs; this thread prints them and polls for a stop request, which aborts the request in the engine (its KV
// is freed within a step, and the prompt's blocks stay in the prefix cache for the next turn).
#include <functional>
#include <string>
#include <string_view>

#include "engine/engine_client.h"
#include "engine/request.h"

namespace kairo::tools::chat {

struct ReplyEnd {
  engine::FinishReason reason = engine::FinishReason::None;
  bool stopped = false;  // stop_requested() said so
  std::string error;     // the engine refused the request or failed during it
  int n_prompt_tokens = 0;
  int n_cached_prompt_tokens = 0;
  int n_generated_tokens = 0;
  double seconds = 0;                // submission to the end
  double first_token_seconds = 0;    // submission to the first token, as the engine measured it
};

ReplyEnd stream_reply(engine::EngineClient& engine, engine::Request request,
                      const std::function<void(std::string_view)>& on_text,
                      const std::function<bool()>& stop_requested);

}  // namespace kairo::tools::chat
