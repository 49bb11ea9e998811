// OpenAI request parsing and validation: the raw body a client sends, through parse_json_body and each endpoint's
// parser (completions, chat, tokenize, detokenize). Anything either becomes a validated request inside every
// RequestLimits bound, or an ApiError (4xx, with a message) that render_error can always write as JSON.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "server/openai/parse_request.h"
#include "server/openai/render_response.h"

namespace {

using namespace kairo::server;

constexpr int kVocab = 32000;

// Small limits so the fuzzer reaches every bound with short inputs.
const RequestLimits& limits() {
  static const RequestLimits l = [] {
    RequestLimits r;
    r.max_body_bytes = 1 << 16;
    r.max_json_depth = 16;
    r.max_messages = 8;
    r.max_tools = 4;
    r.max_stop = 4;
    r.max_stop_bytes = 16;
    r.max_n = 4;
    r.max_prompts = 4;
    r.max_logprobs = 5;
    r.max_logit_bias = 8;
    r.max_tokens = 64;
    return r;
  }();
  return l;
}

void check_error(const ApiError& e) {
  KAIRO_FUZZ_CHECK(e.status >= 400 && e.status < 600, std::to_string(e.status));
  KAIRO_FUZZ_CHECK(!e.message.empty(), "error without a message");
  const std::string out = render_error(e);
  KAIRO_FUZZ_CHECK(nlohmann::json::accept(out), "render_error wrote invalid JSON");
}

void check_params(const GenerationParams& p, int n_prompts) {
  const RequestLimits& l = limits();
  KAIRO_FUZZ_CHECK(p.n >= 1 && p.n * n_prompts <= l.max_n, "n " + std::to_string(p.n));
  KAIRO_FUZZ_CHECK(p.stop.size() <= static_cast<size_t>(l.max_stop), "stop count");
  for (const auto& s : p.stop) KAIRO_FUZZ_CHECK(s.size() <= static_cast<size_t>(l.max_stop_bytes), "stop bytes");
  for (int32_t id : p.stop_token_ids) KAIRO_FUZZ_CHECK(id >= 0 && id < kVocab, "stop_token_ids");
  KAIRO_FUZZ_CHECK(p.logprobs >= -1 && p.logprobs <= l.max_logprobs, "logprobs " + std::to_string(p.logprobs));
  if (p.max_tokens) KAIRO_FUZZ_CHECK(*p.max_tokens >= 1 && *p.max_tokens <= l.max_tokens, "max_tokens");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  auto json = parse_json_body(body, limits().max_json_depth);
  if (!json.ok()) {
    check_error(json.error());
    return 0;
  }
  const ParseContext ctx{limits(), kVocab};

  auto completion = parse_completion_request(*json, ctx);
  if (completion.ok()) {
    KAIRO_FUZZ_CHECK(!completion->prompts.empty(), "completion without a prompt");
    KAIRO_FUZZ_CHECK(completion->prompts.size() <= static_cast<size_t>(limits().max_prompts), "prompt count");
    for (const auto& p : completion->prompts) {
      for (int32_t id : p.tokens) KAIRO_FUZZ_CHECK(id >= 0 && id < kVocab, "prompt id " + std::to_string(id));
    }
    check_params(completion->params, static_cast<int>(completion->prompts.size()));
  } else {
    check_error(completion.error());
  }

  auto chat = parse_chat_request(*json, ctx);
  if (chat.ok()) {
    KAIRO_FUZZ_CHECK(chat->messages.is_array(), "messages not an array");
    KAIRO_FUZZ_CHECK(chat->messages.size() <= static_cast<size_t>(limits().max_messages), "message count");
    for (const auto& m : chat->messages) {
      KAIRO_FUZZ_CHECK(m.is_object() && m.contains("role") && m["role"].is_string(), m.dump(-1, ' ', false,
                       nlohmann::json::error_handler_t::replace));
      // A string, or null for an assistant turn of tool calls alone (as Hugging Face hands it to templates).
      const bool calls_alone = m["role"] == "assistant" && m.contains("tool_calls") && m["content"].is_null();
      KAIRO_FUZZ_CHECK(m.contains("content") && (m["content"].is_string() || calls_alone),
                       "message content is neither a string nor null beside tool calls");
    }
    KAIRO_FUZZ_CHECK(chat->tools.is_null() || (chat->tools.is_array() &&
                                                chat->tools.size() <= static_cast<size_t>(limits().max_tools)),
                     "tools");
    check_params(chat->params, 1);
  } else {
    check_error(chat.error());
  }

  auto tokenize = parse_tokenize_request(*json, ctx);
  if (!tokenize.ok()) check_error(tokenize.error());

  auto detokenize = parse_detokenize_request(*json, ctx);
  if (detokenize.ok()) {
    for (int32_t id : detokenize->tokens) KAIRO_FUZZ_CHECK(id >= 0 && id < kVocab, "detokenize id");
  } else {
    check_error(detokenize.error());
  }
  return 0;
}
