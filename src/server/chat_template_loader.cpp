#include "server/chat_template_loader.h"

#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {
namespace {

Result<std::string> template_source(const gguf::File& model_file, const std::string& file) {
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{"--chat-template-file " + file + ": cannot open the file"};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.empty()) return Error{"--chat-template-file " + file + ": the file is empty"};
    return text;
  }
  if (!model_file.find("tokenizer.chat_template")) return std::string();
  return model_file.get_string("tokenizer.chat_template");
}

// Rendered with the variables transformers passes, plus a request's chat_template_kwargs.
ChatTemplate jinja_template(std::string source, std::string bos, std::string eos) {
  return [source = std::move(source), bos = std::move(bos),
          eos = std::move(eos)](const ChatTemplateInput& in) -> Result<std::string> {
    nlohmann::ordered_json context = in.kwargs.is_object() ? in.kwargs : nlohmann::ordered_json::object();
    context["messages"] = in.messages;
    if (!in.tools.is_null()) context["tools"] = in.tools;
    context["add_generation_prompt"] = in.add_generation_prompt;
    context["bos_token"] = bos;
    context["eos_token"] = eos;
    return jinja::render(source, context);
  };
}

}  // namespace

Result<LoadedChatTemplate> load_chat_template(const gguf::File& model_file, const tokenizer::Tokenizer& tokenizer,
                                              const std::string& template_file) {
  KAIRO_TRY_ASSIGN(std::string source, template_source(model_file, template_file));
  LoadedChatTemplate out;
  if (source.empty()) return out;
  const std::string bos = tokenizer.bos_id() >= 0 ? tokenizer.token_text(tokenizer.bos_id()) : "";
  const std::string eos = tokenizer.eos_id() >= 0 ? tokenizer.token_text(tokenizer.eos_id()) : "";
  const nlohmann::ordered_json probe = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  if (auto r = jinja::apply_chat_template(source, probe, nullptr, true, bos, eos); !r.ok()) {
    return Error{"the chat template" +
                 (template_file.empty() ? std::string(" of the model") : " in " + template_file) +
                 " cannot render a one-message chat: " + r.error().message +
                 " (fix it, or pass --chat-template-file with a template that works)"};
  }
  out.traits = chat_template_traits(source);
  out.render = jinja_template(std::move(source), bos, eos);
  return out;
}

}  // namespace kairo::server
