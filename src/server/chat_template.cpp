#include "server/chat_template.h"

namespace kairo::server {

ChatTemplate chatml_template() {
  return [](const ChatTemplateInput& in) -> Result<std::string> {
    std::string out;
    for (const auto& m : in.messages) {
      const nlohmann::ordered_json& content = m.at("content");
      out += "<|im_start|>" + m.at("role").get<std::string>() + "\n" +
             (content.is_string() ? content.get<std::string>() : std::string()) + "<|im_end|>\n";
    }
    if (in.add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
  };
}

ChatTemplateTraits chat_template_traits(std::string_view source) {
  ChatTemplateTraits t;
  t.thinks = source.find("</think>") != std::string_view::npos;
  t.tool_calls = detect_tool_call_format(source);
  // DeepSeek's templates write `'```json' + '\n' + tool['function']['arguments']`: string concatenation.
  t.arguments_as_text = t.tool_calls == ToolCallFormat::DeepSeek ||
                        source.find("['arguments'] +") != std::string_view::npos ||
                        source.find(".arguments +") != std::string_view::npos;
  return t;
}

}  // namespace kairo::server
