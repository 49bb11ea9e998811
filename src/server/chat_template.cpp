#include "server/chat_template.h"

namespace kairo::server {

ChatTemplate chatml_template() {
  return [](const ChatTemplateInput& in) -> Result<std::string> {
    std::string out;
    for (const auto& m : in.messages) {
      out += "<|im_start|>" + m.at("role").get<std::string>() + "\n" + m.at("content").get<std::string>() +
             "<|im_end|>\n";
    }
    if (in.add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
  };
}

ChatTemplateTraits chat_template_traits(std::string_view source) {
  ChatTemplateTraits t;
  t.thinks = source.find("</think>") != std::string_view::npos;
  t.tool_calls = detect_tool_call_format(source);
  return t;
}

}  // namespace kairo::server
