#pragma once
// The chat template `kairo serve` and `kairo chat` render with: --chat-template-file when given, else the model's
// tokenizer.chat_template, else none (chat_prompt_tokens then uses ChatML). A template that cannot render a
// one-message chat is refused up front, so the error comes at startup, not at the first request.
#include <string>

#include "core/result.h"
#include "server/chat_template.h"

namespace kairo::gguf {
class File;
}
namespace kairo::tokenizer {
class Tokenizer;
}

namespace kairo::server {

struct LoadedChatTemplate {
  ChatTemplate render;  // empty: ChatML
  ChatTemplateTraits traits;
};

// `model_file` is the model's GGUF; `template_file` is --chat-template-file ("" = none given).
Result<LoadedChatTemplate> load_chat_template(const gguf::File& model_file, const tokenizer::Tokenizer& tokenizer,
                                              const std::string& template_file);

}  // namespace kairo::server
