#pragma once
// Results -> OpenAI response JSON: complete responses, streaming chunks (text_completion and
// chat.completion.chunk), usage, errors, /v1/models, /tokenize, /detokenize. Strings that are not valid UTF-8
// (a token piece can be half a character) are written with U+FFFD instead of failing.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/api_error.h"
#include "server/lora_registry.h"
#include "server/server_config.h"

namespace kairo::server {

enum class ApiKind { Completion, Chat };

struct TokenLogprobView {
  std::string token;                                  // the token's text (its piece)
  float logprob = 0.0f;
  std::vector<std::pair<std::string, float>> top;     // alternatives, most likely first
};

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;
};

// Identity shared by every object of one response.
struct ResponseMeta {
  ApiKind kind = ApiKind::Completion;
  std::string id;          // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;
  std::string model;
};

struct ToolCallView {
  std::string id;         // "call_..."
  std::string name;
  std::string arguments;  // JSON text
};

struct ChoiceResult {
  int index = 0;
  std::string text;
  std::optional<std::string> reasoning;    // chat with reasoning split: the thinking (may be empty)
  std::vector<ToolCallView> tool_calls;    // chat: parsed calls (content is then null when empty)
  std::string finish_reason;               // "stop" / "length"
  std::string stop_reason;                 // the stop string that ended it, if any
  bool with_logprobs = false;
  std::vector<TokenLogprobView> logprobs;  // when with_logprobs
  std::vector<float> embedding;            // an embedding request's vector (POST /v1/embeddings)
};

// One streamed piece of one choice.
struct ChoiceDelta {
  int index = 0;
  bool role = false;                       // chat: the opening {"role":"assistant","content":""} delta
  std::string text;
  std::string reasoning;                   // chat: thinking text of this delta (reasoning_content)
  std::vector<std::pair<int, ToolCallView>> tool_calls;  // chat: calls completed in this delta, with their index
  bool with_logprobs = false;
  std::vector<TokenLogprobView> logprobs;
  size_t text_offset = 0;                  // completions logprobs: offset of this delta in the choice's text
  std::optional<std::string> finish_reason;
  std::string stop_reason;
};

std::string render_error(const ApiError& error);
std::string render_response(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices, const Usage& usage);
// One SSE payload (without the "data: " framing). with_usage_field: stream_options.include_usage was set, so every
// chunk carries "usage": null.
std::string render_chunk(const ResponseMeta& meta, const ChoiceDelta& delta, bool with_usage_field);
// The final usage chunk ("choices": []).
std::string render_usage_chunk(const ResponseMeta& meta, const Usage& usage);
// One served model in GET /v1/models. served = false: its names are not listed (the caller's key may use none of
// them). `adapters`: the LoRA adapters to list after it, each with `parent` = model->id and kairo's `lora_id`
// (llama-server's id of it, for the per-request `lora` field).
struct ModelListing {
  const ModelInfo* model = nullptr;
  int context_length = 0;
  bool served = true;
  std::vector<ServedAdapter> adapters;
};
std::string render_models(const std::vector<ModelListing>& models);
// GET /v1/models/{id}: the one model object (`adapter`: what id names, when it is an adapter).
std::string render_model(const ModelInfo& model, const std::string& id, int context_length,
                         const std::optional<ServedAdapter>& adapter = std::nullopt);
std::string render_tokenize(const std::vector<int32_t>& tokens, int context_length);
std::string render_detokenize(const std::string& text);
// {"status": status} (+ "error" when the engine can no longer run requests)
std::string render_health(const char* status, const std::string& error = "");

}  // namespace kairo::server
