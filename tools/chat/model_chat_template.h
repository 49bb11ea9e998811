#pragma once
// The chat template `kairo chat` renders with: --chat-template-file when given, else the model's
// tokenizer.chat_template, else none (server::chat_prompt_tokens then uses ChatML, as `kairo serve` does). A template
// that cannot render a one-message chat is refused up front, so the error comes at start, not at the first message.
// (`kairo serve` does the same in tools/commands/serve.cpp; that copy could call this.)
#include <string>

#include "core/result.h"
#include "server/chat_template.h"

namespace kairo::model {
class Model;
}
namespace kairo::tokenizer {
class Tokenizer;
}

namespace kairo::tools::chat {

struct LoadedChatTemplate {
  server::ChatTemplate render;  // empty: ChatML
  server::ChatTemplateTraits traits;
  std::string source_name;      // for messages: "the model's chat template", "ChatML", "chat.jinja"
};

Result<LoadedChatTemplate> load_chat_template(const model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                              const std::string& template_file);

}  // namespace kairo::tools::chat
