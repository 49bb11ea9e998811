#pragma once
// How chat messages become a prompt. The serve command wires in the model's own Jinja template (tokenizer/jinja);
// chatml_template() is the fallback for models without one (and what the server tests use).
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

#include "server/tool_call_format.h"

namespace kairo::server {

struct ChatTemplateInput {
  const nlohmann::ordered_json& messages;  // normalised by parse_chat_messages: string role and content
  const nlohmann::ordered_json& tools;     // an array, or null when the request has none
  bool add_generation_prompt = true;
  const nlohmann::ordered_json& kwargs;    // chat_template_kwargs (an object)
};

// Renders the prompt text, or an Error whose message the client receives (400): templates raise on conversations
// they do not accept (e.g. roles not alternating).
using ChatTemplate = std::function<Result<std::string>(const ChatTemplateInput&)>;

// "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then "<|im_start|>assistant\n" when asked.
ChatTemplate chatml_template();

// What a template's source says about the model's replies.
struct ChatTemplateTraits {
  bool thinks = false;                                  // it knows `</think>`: a thinking model
  ToolCallFormat tool_calls = ToolCallFormat::None;     // how its tool calls are written
  // It concatenates a call's arguments as text: it gets them as the JSON string, not the object others index.
  bool arguments_as_text = false;
};
ChatTemplateTraits chat_template_traits(std::string_view source);

}  // namespace kairo::server
