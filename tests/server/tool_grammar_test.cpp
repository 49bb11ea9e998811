// The grammars that force tool calls, against the parsers that read them, for every format: texts the grammar
// derives (random derivations by the reference sampler, which shares no code with the matcher) are accepted by
// the matcher and parse, fed byte by byte, into calls of the offered tools whose arguments hold to the tools'
// parameters (including parameters that $ref their own $defs); and what the grammar must refuse (a missing required parameter, a closing tag inside an XML value,
// a second call without parallel_tool_calls) is refused.
#include "server/tool_grammar.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "grammar/byte_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"
#include "reference_matcher.h"
#include "server/tool_call_parser.h"

namespace kairo::server {
namespace {

using json = nlohmann::ordered_json;

json tools() {
  return json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string", "maxLength": 10}, "unit": {"enum": ["c", "f"]}},
      "required": ["city"]}}},
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
      "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99}, "b": {"$ref": "#/$defs/small"}},
      "required": ["a", "b"], "$defs": {"small": {"type": "integer", "minimum": 0, "maximum": 9}}}}},
    {"type": "function", "function": {"name": "note", "parameters": {"type": "object",
      "properties": {"text": {"type": "string"}}, "required": ["text"]}}}])");
}

ChatRequest request(bool parallel, const std::string& only = "") {
  ChatRequest chat;
  chat.tools = tools();
  chat.tool_choice = only.empty() ? "required" : "function";
  chat.tool_choice_name = only;
  chat.parallel_tool_calls = parallel;
  return chat;
}

// The arguments hold to the tool's parameters (checked by hand: the schemas are small).
void expect_valid(const ParsedToolCall& call, const std::string& text) {
  const json args = json::parse(call.arguments);
  if (call.name == "get_weather") {
    ASSERT_TRUE(args["city"].is_string()) << text;
    // maxLength counts code points
    size_t n = 0;
    for (unsigned char c : args["city"].get<std::string>()) n += (c & 0xC0) != 0x80;
    EXPECT_LE(n, 10u) << text;
    if (args.contains("unit")) {
      EXPECT_TRUE(args["unit"] == "c" || args["unit"] == "f") << text;
    }
  } else if (call.name == "add") {
    EXPECT_TRUE(args["a"].is_number_integer() && args["a"] >= 0 && args["a"] <= 99) << text;
    EXPECT_TRUE(args["b"].is_number_integer() && args["b"] >= 0 && args["b"] <= 9) << text;
  } else {
    ASSERT_EQ(call.name, "note") << text;
    EXPECT_TRUE(args["text"].is_string()) << text;
  }
}

struct Compiled {
  grammar::GrammarAst ast;
  grammar::ByteGrammar bytes;
};

Compiled compile(const ChatRequest& chat, ToolCallFormat format) {
  auto g = tool_choice_grammar(chat, format);
  EXPECT_TRUE(g.ok()) << g.error().message;
  auto ast = grammar::parse_gbnf(g->gbnf);
  EXPECT_TRUE(ast.ok()) << ast.error().message << "\n" << g->gbnf;
  auto lowered = grammar::lower_grammar(*ast, g->root);
  EXPECT_TRUE(lowered.ok()) << lowered.error().message << "\n" << g->gbnf;
  return {std::move(*ast), std::move(*lowered)};
}

bool matcher_accepts(const grammar::ByteGrammar& g, const std::string& text) {
  grammar::GrammarMatcher m(std::make_shared<grammar::StackArena>(g), 0);
  return m.accept(text) && m.can_end();
}

std::vector<ParsedToolCall> parse(ToolCallFormat format, const std::string& text, std::string& content) {
  ToolCallParser parser(format, std::make_shared<const json>(tools()));
  std::vector<ParsedToolCall> calls;
  auto take = [&](ToolCallParser::Piece piece) {
    content += piece.content;
    for (auto& c : piece.calls) calls.push_back(std::move(c));
  };
  for (char c : text) take(parser.push(std::string_view(&c, 1)));
  take(parser.flush());
  return calls;
}

class ToolGrammarFormats : public ::testing::TestWithParam<ToolCallFormat> {};

TEST_P(ToolGrammarFormats, DerivedCallsParseIntoValidCalls) {
  const ToolCallFormat format = GetParam();
  for (bool parallel : {false, true}) {
    const Compiled g = compile(request(parallel), format);
    std::mt19937 rng(7);
    int sampled = 0, several = 0;
    std::set<std::string> names;
    for (int attempt = 0; attempt < 600 && sampled < 40; ++attempt) {
      auto text = grammar::testing::sample_from_grammar(g.ast, rng, 600, kToolCallsRule);
      if (!text) continue;
      ++sampled;
      EXPECT_TRUE(matcher_accepts(g.bytes, *text)) << *text;
      std::string content;
      const std::vector<ParsedToolCall> calls = parse(format, *text, content);
      EXPECT_EQ(content, "") << *text;
      ASSERT_GE(calls.size(), 1u) << *text;
      if (!parallel) {
        EXPECT_EQ(calls.size(), 1u) << *text;
      }
      several += calls.size() > 1;
      for (const ParsedToolCall& call : calls) {
        names.insert(call.name);
        expect_valid(call, *text);
      }
    }
    EXPECT_EQ(sampled, 40);
    EXPECT_EQ(names.size(), 3u) << "every tool should be called in 40 derivations";
    if (parallel) {
      EXPECT_GT(several, 0) << "parallel calls should come up";
    }
  }
}

TEST_P(ToolGrammarFormats, ANamedFunctionIsTheOnlyOneCalled) {
  const ToolCallFormat format = GetParam();
  const Compiled g = compile(request(false, "add"), format);
  std::mt19937 rng(11);
  int sampled = 0;
  for (int i = 0; i < 20; ++i) {
    auto text = grammar::testing::sample_from_grammar(g.ast, rng, 600, kToolCallsRule);
    if (!text) continue;
    ++sampled;
    std::string content;
    const auto calls = parse(format, *text, content);
    ASSERT_EQ(calls.size(), 1u) << *text;
    EXPECT_EQ(calls[0].name, "add");
    expect_valid(calls[0], *text);
  }
  EXPECT_GE(sampled, 15);
}

// tool_choice "auto": free text, then (maybe) calls held to the tools. What the grammar derives splits, through the
// parser, into that text as content and valid calls.
TEST_P(ToolGrammarFormats, AutoLetsTextThroughAndHoldsCallsToTheTools) {
  const ToolCallFormat format = GetParam();
  ChatRequest chat = request(true);
  chat.tool_choice = "auto";
  const std::optional<ToolGrammar> g = tool_auto_grammar(chat, format);
  if (format == ToolCallFormat::Llama3Json || format == ToolCallFormat::Mistral) {
    EXPECT_FALSE(g) << "calls that are the whole reply have no marker to switch on at";
    return;
  }
  ASSERT_TRUE(g);
  auto ast = grammar::parse_gbnf(g->gbnf);
  ASSERT_TRUE(ast.ok()) << ast.error().message;
  auto bytes = grammar::lower_grammar(*ast, g->root);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  std::mt19937 rng(3);
  int sampled = 0, with_calls = 0, text_only = 0;
  for (int attempt = 0; attempt < 2000 && sampled < 60; ++attempt) {
    auto text = grammar::testing::sample_from_grammar(*ast, rng, 400, g->root);
    if (!text) continue;
    ++sampled;
    EXPECT_TRUE(matcher_accepts(*bytes, *text)) << *text;
    std::string content;
    const auto calls = parse(format, *text, content);
    for (const ParsedToolCall& call : calls) expect_valid(call, *text);
    if (calls.empty()) {
      ++text_only;
      EXPECT_EQ(content, *text);
    } else {
      ++with_calls;
      EXPECT_EQ(text->rfind(content, 0), 0u) << "the text before the calls is the content: " << *text;
    }
  }
  EXPECT_EQ(sampled, 60);
  EXPECT_GT(with_calls, 0);
  EXPECT_GT(text_only, 0);
  // Once a call opens it must be one of the tools, with valid arguments.
  const std::string opening = format == ToolCallFormat::DeepSeek ? "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                              : format == ToolCallFormat::Hermes ? "<tool_call>\n{\"name\":\""
                                                                 : "<tool_call>\n<function=";
  grammar::GrammarMatcher m(std::make_shared<grammar::StackArena>(*bytes), 0);
  EXPECT_TRUE(m.accept("Sure, <b>let</b> me check. " + opening));
  EXPECT_FALSE(grammar::GrammarMatcher(m).accept("nope"));
  EXPECT_TRUE(grammar::GrammarMatcher(m).accept("add"));
  EXPECT_FALSE(matcher_accepts(*bytes, "text " + opening));  // an opened call must be finished
}

INSTANTIATE_TEST_SUITE_P(All, ToolGrammarFormats,
                         ::testing::Values(ToolCallFormat::Hermes, ToolCallFormat::Llama3Json, ToolCallFormat::Mistral,
                                           ToolCallFormat::DeepSeek, ToolCallFormat::Qwen3CoderXml));

TEST(ToolGrammar, XmlValuesAndWhatTheyRefuse) {
  const Compiled one = compile(request(false), ToolCallFormat::Qwen3CoderXml);
  const Compiled many = compile(request(true), ToolCallFormat::Qwen3CoderXml);
  const auto note = [](const std::string& text) {
    return "<tool_call>\n<function=note>\n<parameter=text>\n" + text + "\n</parameter>\n</function>\n</tool_call>";
  };
  const std::string add = "<tool_call>\n<function=add>\n<parameter=a>\n12\n</parameter>\n<parameter=b>\n3\n"
                          "</parameter>\n</function>\n</tool_call>";
  // Raw text of any shape, but no closing tag inside it.
  EXPECT_TRUE(matcher_accepts(one.bytes, note("two\nlines, <b>tags</b>, </paramete and </tool_cal")));
  EXPECT_TRUE(matcher_accepts(one.bytes, note("")));
  EXPECT_FALSE(matcher_accepts(one.bytes, note("a</parameter>b")));
  EXPECT_FALSE(matcher_accepts(one.bytes, note("a</tool_call>b")));
  EXPECT_TRUE(matcher_accepts(one.bytes, add));
  EXPECT_FALSE(matcher_accepts(one.bytes, add + "\n" + add));  // one call without parallel_tool_calls
  EXPECT_TRUE(matcher_accepts(many.bytes, add + "\n" + add));
  // Required parameters, the integer bounds, the enum and maxLength of raw text.
  EXPECT_FALSE(matcher_accepts(one.bytes, "<tool_call>\n<function=add>\n<parameter=a>\n12\n</parameter>\n"
                                          "</function>\n</tool_call>"));
  EXPECT_FALSE(matcher_accepts(one.bytes, "<tool_call>\n<function=add>\n<parameter=a>\n12\n</parameter>\n"
                                          "<parameter=b>\n10\n</parameter>\n</function>\n</tool_call>"));
  const auto weather = [](const std::string& city, const std::string& unit) {
    return "<tool_call>\n<function=get_weather>\n<parameter=city>\n" + city + "\n</parameter>\n" +
           (unit.empty() ? "" : "<parameter=unit>\n" + unit + "\n</parameter>\n") + "</function>\n</tool_call>";
  };
  EXPECT_TRUE(matcher_accepts(one.bytes, weather("Paris", "")));
  EXPECT_TRUE(matcher_accepts(one.bytes, weather("Paris", "f")));
  EXPECT_FALSE(matcher_accepts(one.bytes, weather("Paris", "k")));
  EXPECT_FALSE(matcher_accepts(one.bytes, weather("Rio de Janeiro", "")));
  // The textbook recognizer agrees on each of these.
  for (const std::string& text : {note("x</parameter>"), note("x</param"), add, weather("Paris", "k")}) {
    EXPECT_EQ(grammar::testing::reference_full_match(one.ast, text, kToolCallsRule), matcher_accepts(one.bytes, text))
        << text;
  }
}

TEST(ToolGrammar, XmlStringConstraintsRawTextCannotCarryAreRefused) {
  ChatRequest chat = request(false);
  chat.tools[2]["function"]["parameters"]["properties"]["text"]["pattern"] = "^[a-z]+$";
  auto g = tool_choice_grammar(chat, ToolCallFormat::Qwen3CoderXml);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("tools[2].function.parameters.properties.text"), std::string::npos)
      << g.error().message;
  EXPECT_NE(g.error().message.find("'pattern'"), std::string::npos) << g.error().message;
  // Lengths past what a grammar spells out are refused too (by the schema check every format shares), not dropped.
  ChatRequest long_text = request(false);
  long_text.tools[2]["function"]["parameters"]["properties"]["text"]["maxLength"] = 100000;
  auto too_long = tool_choice_grammar(long_text, ToolCallFormat::Qwen3CoderXml);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("'maxLength' above 1000 is not supported"), std::string::npos)
      << too_long.error().message;
  // The JSON formats carry it.
  auto json_format = tool_choice_grammar(chat, ToolCallFormat::Hermes);
  EXPECT_TRUE(json_format.ok()) << json_format.error().message;
}

TEST(ToolGrammar, DeepSeekCallsAreSectionsOfFencedJson) {
  const Compiled g = compile(request(true), ToolCallFormat::DeepSeek);
  const std::string call = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"a\":1,\"b\":2}\n```<｜tool▁call▁end｜>";
  EXPECT_TRUE(matcher_accepts(g.bytes, "<｜tool▁calls▁begin｜>" + call + "<｜tool▁calls▁end｜>"));
  EXPECT_TRUE(matcher_accepts(g.bytes, "<｜tool▁calls▁begin｜>" + call + "\n" + call + "<｜tool▁calls▁end｜>"));
  EXPECT_FALSE(matcher_accepts(g.bytes, "<｜tool▁calls▁begin｜>" + call));  // the section closes
  EXPECT_FALSE(matcher_accepts(g.bytes, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n"
                                        "{\"a\":1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));  // b is required
}

}  // namespace
}  // namespace kairo::server
