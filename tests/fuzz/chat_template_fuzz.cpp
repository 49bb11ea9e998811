// Chat-template interpreter. Two modes, chosen by byte 0:
//  - even: the rest of the input is a template source, rendered with a fixed conversation (messages with every
//    role, tool calls, tools) under small RenderOptions limits: any syntax, recursion, loop or output blow-up must
//    come back as an Error, never a crash, a hang or an escaped exception;
//  - odd: byte 1 picks one of the real templates from ../shared/chat-templates and the rest, split at NUL bytes,
//    becomes message contents and a tool name, so arbitrary client bytes (invalid UTF-8 included) reach tojson,
//    string methods and filters.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/mapped_file.h"
#include "fuzz_util.h"
#include "tokenizer/jinja/chat_template.h"

namespace {

using json = nlohmann::ordered_json;

kairo::jinja::RenderOptions small_limits() {
  kairo::jinja::RenderOptions o;
  o.max_output_bytes = 1 << 16;
  o.max_recursion_depth = 16;
  o.max_loop_iterations = 20000;
  o.max_macro_calls = 20000;
  o.strftime_now_date = "2026-01-15";
  return o;
}

json conversation(const std::vector<std::string>& parts) {
  auto part = [&](size_t i, const char* fallback) { return i < parts.size() ? parts[i] : std::string(fallback); };
  json messages = json::array();
  messages.push_back({{"role", "system"}, {"content", part(0, "You are helpful.")}});
  messages.push_back({{"role", "user"}, {"content", part(1, "What is the weather in Paris?")}});
  json call = {{"id", "call_1"},
               {"type", "function"},
               {"function", {{"name", part(2, "get_weather")}, {"arguments", {{"city", part(3, "Paris")}}}}}};
  messages.push_back({{"role", "assistant"}, {"content", part(4, "")}, {"tool_calls", json::array({call})}});
  messages.push_back({{"role", "tool"}, {"tool_call_id", "call_1"}, {"name", part(2, "get_weather")},
                      {"content", part(5, "{\"temp\": 21}")}});
  messages.push_back({{"role", "assistant"}, {"content", part(6, "It is 21 degrees.")}});
  messages.push_back({{"role", "user"}, {"content", part(7, "Thanks!")}});
  return messages;
}

json tools(const std::vector<std::string>& parts) {
  const std::string name = parts.size() > 2 ? parts[2] : "get_weather";
  return json::array({{{"type", "function"},
                       {"function",
                        {{"name", name},
                         {"description", parts.size() > 8 ? parts[8] : "Current weather"},
                         {"parameters",
                          {{"type", "object"},
                           {"properties", {{"city", {{"type", "string"}, {"description", "City name"}}}}},
                           {"required", json::array({"city"})}}}}}}});
}

std::vector<std::string>& real_templates() {
  static std::vector<std::string> all = [] {
    std::vector<std::string> v;
    for (const char* name : {"Qwen-Qwen2.5-7B-Instruct.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
                             "mistralai-Mistral-Nemo-Instruct-2407.jinja", "microsoft-Phi-3.5-mini-instruct.jinja",
                             "google-gemma-2-2b-it.jinja", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
                             "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
                             "CohereForAI-c4ai-command-r-plus-tool_use.jinja"}) {
      auto text = kairo::read_text_file(kairo::fuzz::shared_path(std::string("chat-templates/") + name));
      if (!text.ok()) kairo::fuzz::setup_failed(text.error().message);
      v.push_back(std::move(text.value()));
    }
    return v;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)real_templates();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kairo::fuzz::Input in(data, size);
  const uint8_t mode = in.byte();
  const auto options = small_limits();
  if (mode % 2 == 0) {
    const std::string source(in.rest());
    const std::vector<std::string> none;
    auto out = kairo::jinja::apply_chat_template(source, conversation(none), tools(none), true, "<s>", "</s>",
                                                 options);
    if (out.ok()) KAIRO_FUZZ_CHECK(out->size() <= options.max_output_bytes, "output beyond max_output_bytes");
    return 0;
  }
  const std::string& tmpl = real_templates()[in.byte() % real_templates().size()];
  const bool add_generation_prompt = mode & 2;
  const bool with_tools = mode & 4;
  std::vector<std::string> parts(1);
  for (char c : in.rest()) {
    if (c == '\0') {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  auto out = kairo::jinja::apply_chat_template(tmpl, conversation(parts), with_tools ? tools(parts) : json(),
                                               add_generation_prompt, "<s>", "</s>", options);
  if (out.ok()) KAIRO_FUZZ_CHECK(out->size() <= options.max_output_bytes, "output beyond max_output_bytes");
  return 0;
}
