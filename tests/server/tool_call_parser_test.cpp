// The tool-call parsers (Hermes, Llama-3.x JSON, Mistral, DeepSeek, Qwen3-Coder XML) on recorded-style outputs
// (text before the call, two parallel calls), fed whole and byte by byte: the same calls and content every way,
// arguments exact, no marker text in content.
#include "server/tool_call_parser.h"

#include <gtest/gtest.h>

namespace kairo::server {
namespace {

struct Parsed {
  std::string content;
  std::vector<ParsedToolCall> calls;
};

// The tools Qwen3-Coder XML calls are read against: a string, an integer and an object parameter.
std::shared_ptr<const nlohmann::ordered_json> xml_tools() {
  return std::make_shared<const nlohmann::ordered_json>(nlohmann::ordered_json::parse(R"([
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
      "path": {"type": "string"}, "mode": {"type": "integer"}, "meta": {"type": "object"},
      "note": {"type": ["string", "null"]}}}}}])"));
}

Parsed feed(const std::string& text, size_t chunk, ToolCallFormat format = ToolCallFormat::Hermes) {
  ToolCallParser p(format, xml_tools());
  Parsed out;
  auto take = [&](ToolCallParser::Piece piece) {
    out.content += piece.content;
    for (auto& c : piece.calls) out.calls.push_back(std::move(c));
  };
  for (size_t i = 0; i < text.size(); i += chunk) take(p.push(std::string_view(text).substr(i, chunk)));
  take(p.flush());
  return out;
}

void expect_parse(const std::string& text, const std::string& content,
                  const std::vector<std::pair<std::string, std::string>>& calls,
                  ToolCallFormat format = ToolCallFormat::Hermes) {
  for (size_t chunk : {text.size() + 1, size_t{1}, size_t{2}, size_t{7}}) {
    const Parsed got = feed(text, chunk, format);
    EXPECT_EQ(got.content, content) << "chunks of " << chunk << ": " << text;
    ASSERT_EQ(got.calls.size(), calls.size()) << "chunks of " << chunk << ": " << text;
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(got.calls[i].name, calls[i].first);
      EXPECT_EQ(got.calls[i].arguments, calls[i].second);
    }
  }
}

TEST(ToolCallParser, DetectsTheFormatFromTheTemplate) {
  EXPECT_EQ(detect_tool_call_format("{% if tools %}<tool_call>{{ x }}</tool_call>{% endif %}"), ToolCallFormat::Hermes);
  EXPECT_EQ(detect_tool_call_format("{{ messages }}"), ToolCallFormat::None);
}

TEST(ToolCallParser, TextThenACall) {
  expect_parse("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
               "</tool_call>",
               "Let me check.\n", {{"get_weather", R"({"city":"Paris"})"}});
}

TEST(ToolCallParser, TwoParallelCallsAndBlanksBetween) {
  expect_parse("<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n"
               "{\"name\": \"b\", \"arguments\": {\"x\": [1, 2], \"s\": \"</tool\"}}\n</tool_call>\n",
               "", {{"a", "{}"}, {"b", R"({"x":[1,2],"s":"</tool"})"}});
}

TEST(ToolCallParser, WhatIsNotACallStaysContent) {
  expect_parse("no calls here, just <tool talk", "no calls here, just <tool talk", {});
  expect_parse("<tool_call>\n{\"name\": \"a\", \"argu", "<tool_call>\n{\"name\": \"a\", \"argu", {});  // cut off
  expect_parse("<tool_call>not json</tool_call>", "<tool_call>not json</tool_call>", {});
  expect_parse("<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", {});
}

TEST(ToolCallParser, TextAfterACallIsKeptWithItsBlanks) {
  expect_parse("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n\nDone.", "\n\nDone.", {{"a", "{}"}});
}

TEST(ToolCallParser, Llama3JsonCalls) {
  const auto llama = ToolCallFormat::Llama3Json;
  expect_parse(R"({"name": "get_weather", "parameters": {"city": "Paris", "note": "a } in \"text\""}})", "",
               {{"get_weather", R"({"city":"Paris","note":"a } in \"text\""})"}}, llama);
  expect_parse(R"(  {"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": [1, {"y": 2}]}})", "",
               {{"a", "{}"}, {"b", R"({"x":[1,{"y":2}]})"}}, llama);
  expect_parse("The weather is fine.", "The weather is fine.", {}, llama);
  expect_parse(R"({"answer": 42} is JSON but no call)", R"({"answer": 42} is JSON but no call)", {}, llama);
  expect_parse(R"({"name": "a", "parame)", R"({"name": "a", "parame)", {}, llama);  // cut off
  expect_parse(R"({"name": "a", "parameters": {}} and some text)", "and some text", {{"a", "{}"}}, llama);  // blanks and ; after a call go
}

TEST(ToolCallParser, MistralArraysOfCalls) {
  const auto mistral = ToolCallFormat::Mistral;
  // The control token [TOOL_CALLS] decodes to nothing: the array alone.
  expect_parse(R"([{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "b", "arguments": {"x": "]"}}])",
               "", {{"get_weather", R"({"city":"Paris"})"}, {"b", R"({"x":"]"})"}}, mistral);
  // Written as text, the marker is dropped.
  expect_parse(R"([TOOL_CALLS] [{"name": "a", "arguments": {}}])", "", {{"a", "{}"}}, mistral);
  expect_parse("Sunny, 21 degrees.", "Sunny, 21 degrees.", {}, mistral);
  expect_parse(R"([1, 2] is an array but no call)", R"([1, 2] is an array but no call)", {}, mistral);
  expect_parse(R"([])", "[]", {}, mistral);
  expect_parse(R"([{"name": "a", "argum)", R"([{"name": "a", "argum)", {}, mistral);  // cut off
}

TEST(ToolCallParser, DeepSeekCalls) {
  const auto ds = ToolCallFormat::DeepSeek;
  // R1 / V3: the type, the name on its own line, the arguments in a json fence; two calls in one section.
  expect_parse("I will look it up.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
               "```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>add"
               "\n```json\n{\"a\": 1, \"b\": 2}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
               "I will look it up.", {{"get_weather", R"({"city":"Paris"})"}, {"add", R"({"a":1,"b":2})"}}, ds);
  // V3.1: the name before the separator, bare JSON after it.
  expect_parse("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>add<｜tool▁sep｜>{\"a\": 3}<｜tool▁call▁end｜>"
               "<｜tool▁calls▁end｜>",
               "", {{"add", R"({"a":3})"}}, ds);
  // The R1 template itself leaves the section open after one call: a complete call still counts at the end.
  expect_parse("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```"
               "<｜tool▁call▁end｜>",
               "", {{"f", "{}"}}, ds);
  // Cut inside a call, or not a call: the text as written.
  const std::string cut = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\":";
  expect_parse(cut, cut, {}, ds);
  const std::string junk = "<｜tool▁calls▁begin｜>no call here<｜tool▁calls▁end｜>";
  expect_parse(junk, junk, {}, ds);
  expect_parse("<｜tool half a marker", "<｜tool half a marker", {}, ds);
}

TEST(ToolCallParser, Qwen3CoderXmlCalls) {
  const auto xml = ToolCallFormat::Qwen3CoderXml;
  // String parameters are raw text (several lines, '<' and JSON-looking text kept as written); others are JSON.
  expect_parse("Writing it.\n<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a b.txt\n</parameter>\n"
               "<parameter=mode>\n420\n</parameter>\n<parameter=meta>\n{\"x\": [1, 2]}\n</parameter>\n"
               "<parameter=note>\nline 1\n<b>line 2</b> {\"y\": 1}\n</parameter>\n</function>\n</tool_call>",
               "Writing it.\n",
               {{"write_file",
                 R"({"path":"/tmp/a b.txt","mode":420,"meta":{"x":[1,2]},"note":"line 1\n<b>line 2</b> {\"y\": 1}"})"}},
               xml);
  // Two calls; a parameter no tool declares stays text; a JSON parameter that does not parse stays text.
  expect_parse("<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>\n"
               "<tool_call>\n<function=write_file>\n<parameter=mode>\nsix\n</parameter>\n</function>\n"
               "</tool_call>",
               "", {{"f", R"({"n":"5"})"}, {"write_file", R"({"mode":"six"})"}}, xml);
  expect_parse("<tool_call>\n<function=f>\n</function>\n</tool_call>", "", {{"f", "{}"}}, xml);
  // Not XML calls: the text as written.
  for (const std::string bad : {"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
                                "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>",
                                "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
                                "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n"
                                "</parameter>\n</function>\n</tool_call>"}) {
    expect_parse(bad, bad, {}, xml);
  }
}

TEST(ToolCallParser, WithoutAFormatEverythingIsContent) {
  const std::string text = "<tool_call>{\"name\": \"a\"}</tool_call>";
  EXPECT_EQ(feed(text, 3, ToolCallFormat::None).content, text);
  EXPECT_TRUE(feed(text, 3, ToolCallFormat::None).calls.empty());
}

}  // namespace
}  // namespace kairo::server

#include <fstream>
#include <sstream>

#include "server/chat_template.h"
#include "test_paths.h"

namespace kairo::server {
namespace {

std::string shared_template(const std::string& name) {
  std::ifstream in(kairo::testing::shared_path("chat-templates/" + name));
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

TEST(ChatTemplateTraits, RealTemplatesAreRecognised) {
  const auto qwen = chat_template_traits(shared_template("Qwen-Qwen2.5-7B-Instruct.jinja"));
  EXPECT_EQ(qwen.tool_calls, ToolCallFormat::Hermes);
  EXPECT_FALSE(qwen.thinks);
  EXPECT_EQ(chat_template_traits(shared_template("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja")).tool_calls,
            ToolCallFormat::Hermes);
  EXPECT_TRUE(chat_template_traits(shared_template("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja")).thinks);
  const auto llama = chat_template_traits(shared_template("meta-llama-Llama-3.1-8B-Instruct.jinja"));
  EXPECT_EQ(llama.tool_calls, ToolCallFormat::Llama3Json);
  EXPECT_FALSE(llama.thinks);
  EXPECT_EQ(chat_template_traits(shared_template("meta-llama-Llama-3.2-3B-Instruct.jinja")).tool_calls,
            ToolCallFormat::Llama3Json);
  EXPECT_EQ(chat_template_traits(shared_template("google-gemma-2-2b-it.jinja")).tool_calls, ToolCallFormat::None);
  EXPECT_EQ(chat_template_traits(shared_template("mistralai-Mistral-Nemo-Instruct-2407.jinja")).tool_calls,
            ToolCallFormat::Mistral);
  const auto deepseek = chat_template_traits(shared_template("deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"));
  EXPECT_EQ(deepseek.tool_calls, ToolCallFormat::DeepSeek);
  EXPECT_TRUE(deepseek.arguments_as_text);  // it concatenates the arguments string
  EXPECT_FALSE(qwen.arguments_as_text);
  EXPECT_EQ(chat_template_traits("{{ '<tool_call>\\n<function=' + name + '>\\n<parameter=' }}").tool_calls,
            ToolCallFormat::Qwen3CoderXml);
}

}  // namespace
}  // namespace kairo::server
