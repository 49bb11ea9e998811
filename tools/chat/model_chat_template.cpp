#include "chat/model_chat_template.h"

#include <fstream>
#include <iterator>

#include "model/model.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools::chat {
namespace {

Result<std::string> template_source(const model::Model& model, const std::string& file) {
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{"--chat-template-file " + file + ": cannot open the file"};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.empty()) return Error{"--chat-template-file " + file + ": the file is empty"};
    return text;
  }
  if (!model.file().find("tokenizer.chat_template")) return std::string();
  return model.file().get_string("tokenizer.chat_template");
}

}  // namespace

Result<LoadedChatTemplate> load_chat_template(const model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                              const std::string& template_file) {
  KAIRO_TRY_ASSIGN(std::string source, template_source(model, template_file));
  LoadedChatTemplate out;
  if (source.empty()) {
    out.source_name = "ChatML";
    return out;
  }
  out.source_name = template_file.empty() ? "the model's chat template" : template_file;
  const std::string bos = tokenizer.bos_id() >= 0 ? tokenizer.token_text(tokenizer.bos_id()) : "";
  const std::string eos = tokenizer.eos_id() >= 0 ? tokenizer.token_text(tokenizer.eos_id()) : "";
  const nlohmann::ordered_json probe = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  if (auto r = jinja::apply_chat_template(source, probe, nullptr, true, bos, eos); !r.ok()) {
    return Error{out.source_name + " cannot render a one-message chat: " + r.error().message +
                 " (fix it, or pass --chat-template-file with a template that works)"};
  }
  out.traits = server::chat_template_traits(source);
  out.render = [source, bos, eos](const server::ChatTemplateInput& in) -> Result<std::string> {
    return jinja::apply_chat_template(source, in.messages, in.tools, in.add_generation_prompt, bos, eos);
  };
  return out;
}

}  // namespace kairo::tools::chat
