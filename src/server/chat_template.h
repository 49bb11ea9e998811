#pragma once
// How chat messages become a prompt. The serve command wires in the model's own Jinja template (tokenizer/jinja);
// chatml_template() is the fallback for models without one (and what the server tests use).
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

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

}  // namespace kairo::server
