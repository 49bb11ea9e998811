// Tool calls end to end over HTTP with the real engine on a random-weight model (the grammar, not the model, makes
// the calls valid) and a Hermes-format template: tool_choice "required" and a named function give calls whose
// arguments validate, finish_reason "tool_calls", content null; parallel_tool_calls false gives one call; the
// streamed deltas carry each call once, whole, and equal the non-streamed reply; "none" parses nothing.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "engine/engine.h"
#include "http_client.h"
#include "model/model.h"
#include "server/server.h"
#include "server/tool_call_parser.h"
#include "test_paths.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

// A short Hermes-style template: the tools' names, the conversation, then the assistant's turn.
ChatTemplate hermes_template() {
  return [](const ChatTemplateInput& in) -> Result<std::string> {
    std::string s = "tools:";
    if (in.tools.is_array())
      for (const auto& t : in.tools) s += " " + t["function"]["name"].get<std::string>();
    s += "\n";
    for (const auto& m : in.messages) s += m["role"].get<std::string>() + ": " + m["content"].get<std::string>() + "\n";
    return s + "assistant:";
  };
}

class ToolCallsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(m).value().release();
    auto t = tokenizer::Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok()) << t.error().message;
    tokenizer_ = std::move(t).value().release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete model_;
  }
  void SetUp() override { start(ToolCallFormat::Hermes); }
  void start(ToolCallFormat format, ChatTemplate chat_template = hermes_template(),
             std::optional<ChatTemplateTraits> traits = std::nullopt) {
    if (server_) TearDown();
    format_ = format;
    engine::EngineConfig cfg;
    cfg.max_model_len = 512;
    cfg.scheduler.max_num_seqs = 8;
    auto e = engine::Engine::create(*model_, *tokenizer_, cfg);
    ASSERT_TRUE(e.ok()) << e.error().message;
    engine_ = std::move(e).value();
    ServerConfig c;
    c.port = 0;
    c.n_http_threads = 2;
    c.access_log = false;
    ModelInfo info;
    info.id = "demo";
    server_ = std::make_unique<Server>(c, info);
    ASSERT_TRUE(server_->start().ok());
    server_->attach(*engine_, *tokenizer_, std::move(chat_template), traits.value_or(ChatTemplateTraits{false, format}));
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->stop();
    server_.reset();
    engine_.reset();
  }
  HttpResult chat(json body) {
    body["messages"] = json::array({{{"role", "user"}, {"content", "weather in Paris?"}}});
    body["tools"] = tools();
    return request(port_, "POST", "/v1/chat/completions", body.dump());
  }
  static json tools() {
    return json::array(
        {{{"type", "function"},
          {"function",
           {{"name", "get_weather"},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"city", {{"type", "string"}, {"maxLength", 10}}},
                              {"unit", {{"enum", {"c", "f"}}}}}},
              {"required", {"city", "unit"}}}}}}},
         {{"type", "function"},
          {"function",
           {{"name", "add"},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}},
                              {"b", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
              {"required", {"a", "b"}},
              {"additionalProperties", false}}}}}}});
  }
  // A call's arguments valid against its tool's parameters (checked by hand: the schemas are small).
  void expect_valid_call(const json& call) const {
    ASSERT_EQ(call["type"], "function");
    const std::string id = call["id"];
    if (format_ == ToolCallFormat::Mistral) {  // Mistral's templates take nothing but 9 alphanumerics
      EXPECT_EQ(id.size(), 9u) << id;
      for (char c : id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
    } else {
      EXPECT_EQ(id.rfind("call_", 0), 0u) << id;
    }
    const std::string name = call["function"]["name"];
    const json args = json::parse(call["function"]["arguments"].get<std::string>());
    if (name == "get_weather") {
      ASSERT_TRUE(args["city"].is_string()) << args;
      EXPECT_TRUE(args["unit"] == "c" || args["unit"] == "f") << args;
    } else {
      ASSERT_EQ(name, "add");
      EXPECT_EQ(args.size(), 2u) << args;
      EXPECT_TRUE(args["a"].is_number_integer() && args["a"] >= 0 && args["a"] <= 99) << args;
      EXPECT_TRUE(args["b"].is_number_integer() && args["b"] >= 0 && args["b"] <= 99) << args;
    }
  }

  static model::Model* model_;
  static tokenizer::Tokenizer* tokenizer_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  ToolCallFormat format_ = ToolCallFormat::Hermes;
};

model::Model* ToolCallsTest::model_ = nullptr;
tokenizer::Tokenizer* ToolCallsTest::tokenizer_ = nullptr;

TEST_F(ToolCallsTest, RequiredGivesValidCallsStreamedOrNot) {
  int n_checked = 0;
  for (int seed = 0; seed < 8; ++seed) {
    const json body = {{"tool_choice", "required"}, {"temperature", 1}, {"seed", seed}, {"max_tokens", 450}};
    const auto r = chat(body);
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;  // cut inside a call: a prefix, as the model wrote it
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << choice;
    const json calls = choice["message"]["tool_calls"];
    ASSERT_GE(calls.size(), 1u) << choice;
    ++n_checked;
    EXPECT_TRUE(choice["message"]["content"].is_null()) << choice;
    for (const json& c : calls) expect_valid_call(c);

    json streamed_body = body;
    streamed_body["stream"] = true;
    const auto s = chat(streamed_body);
    ASSERT_EQ(s.status, 200);
    json streamed = json::array();
    std::string content;
    std::string finish;
    for (const std::string& e : s.sse_data()) {
      if (e == "[DONE]") break;
      const json ch = json::parse(e)["choices"][0];
      if (ch["delta"].contains("content")) content += ch["delta"]["content"].get<std::string>();
      if (ch["delta"].contains("tool_calls")) {
        for (const json& c : ch["delta"]["tool_calls"]) {
          EXPECT_EQ(c["index"], streamed.size());  // each index once, in order, whole
          streamed.push_back(c);
        }
      }
      if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
    }
    EXPECT_EQ(finish, "tool_calls");
    EXPECT_EQ(content.find("<tool_call>"), std::string::npos);
    ASSERT_EQ(streamed.size(), calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(streamed[i]["function"], calls[i]["function"]);  // same seed, same tokens; ids are fresh
      expect_valid_call(streamed[i]);
    }
  }
  EXPECT_GE(n_checked, 4) << "most replies should finish their calls within 450 tokens";
}

TEST_F(ToolCallsTest, ANamedFunctionAndOneCallAtATime) {
  int n_checked = 0;
  for (int seed = 0; seed < 6; ++seed) {
    const auto r = chat({{"tool_choice", {{"type", "function"}, {"function", {{"name", "add"}}}}},
                         {"parallel_tool_calls", false}, {"temperature", 1}, {"seed", seed}, {"max_tokens", 200}});
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;
    EXPECT_EQ(choice["finish_reason"], "tool_calls");
    const json calls = choice["message"]["tool_calls"];
    ASSERT_EQ(calls.size(), 1u) << choice;
    EXPECT_EQ(calls[0]["function"]["name"], "add");
    expect_valid_call(calls[0]);
    ++n_checked;
  }
  EXPECT_GE(n_checked, 4);
}

TEST_F(ToolCallsTest, Llama3JsonFormatGivesTheSameKindOfCalls) {
  start(ToolCallFormat::Llama3Json);
  int n_checked = 0;
  for (int seed = 0; seed < 12; ++seed) {
    const auto r = chat({{"tool_choice", "required"}, {"temperature", 1}, {"seed", seed}, {"max_tokens", 450}});
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << choice;
    ASSERT_GE(choice["message"]["tool_calls"].size(), 1u) << choice;
    for (const json& c : choice["message"]["tool_calls"]) expect_valid_call(c);
    ++n_checked;
  }
  // A random model may go on calling (parallel calls are allowed) until max_tokens: a few seeds must finish.
  EXPECT_GE(n_checked, 4);
}

TEST_F(ToolCallsTest, NoneParsesNothingAndAForcedCallCannotTakeAResponseFormat) {
  const auto r = chat({{"tool_choice", "none"}, {"temperature", 0}, {"max_tokens", 8}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.json()["choices"][0]["message"].contains("tool_calls"));
  const auto bad = chat({{"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}});
  ASSERT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json()["error"]["message"],
            "a 'tool_choice' that forces a call cannot be combined with an output constraint ('response_format')");
}


// Mistral Nemo's own template: forced calls come back as a [TOOL_CALLS] array parsed into tool_calls, and the
// round trip (the assistant's calls and the tool's result sent back) renders, which the template allows only with
// 9-character alphanumeric call ids.
TEST_F(ToolCallsTest, MistralCallsAndTheirRoundTripThroughTheRealTemplate) {
  std::ifstream in(kairo::testing::shared_path("chat-templates/mistralai-Mistral-Nemo-Instruct-2407.jinja"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string source = ss.str();
  ASSERT_FALSE(source.empty());
  ASSERT_EQ(detect_tool_call_format(source), ToolCallFormat::Mistral);
  start(ToolCallFormat::Mistral, [source](const ChatTemplateInput& t) {
    return jinja::apply_chat_template(source, t.messages, t.tools, t.add_generation_prompt, "<s>", "</s>");
  });
  int n_checked = 0;
  for (int seed = 0; seed < 6; ++seed) {
    const auto r = chat({{"tool_choice", "required"}, {"parallel_tool_calls", false}, {"temperature", 1},
                         {"seed", seed}, {"max_tokens", 85}});
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << choice;
    EXPECT_TRUE(choice["message"]["content"].is_null()) << choice;
    ASSERT_GE(choice["message"]["tool_calls"].size(), 1u) << choice;
    for (const json& c : choice["message"]["tool_calls"]) expect_valid_call(c);
    json messages = json::array({{{"role", "user"}, {"content", "weather in Paris?"}}, choice["message"]});
    for (const json& c : choice["message"]["tool_calls"])
      messages.push_back({{"role", "tool"}, {"tool_call_id", c["id"]}, {"content", "sunny"}});
    // With the tools the history outgrows this model's 512-token context: /tokenize renders it all the same.
    const auto rendered = request(port_, "POST", "/tokenize", json{{"messages", messages}, {"tools", tools()}}.dump());
    EXPECT_EQ(rendered.status, 200) << rendered.body;
    const json back = {{"messages", messages}, {"max_tokens", 4}, {"temperature", 0}};
    const auto r2 = request(port_, "POST", "/v1/chat/completions", back.dump());
    EXPECT_EQ(r2.status, 200) << r2.body;
    ++n_checked;
  }
  EXPECT_GE(n_checked, 3);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << path;
  return ss.str();
}

// The calls a reply's text holds, read back with the format's parser (for a round trip through a real template).
std::vector<ParsedToolCall> parse_back(ToolCallFormat format, const std::string& text, const json& tools) {
  ToolCallParser parser(format, std::make_shared<const nlohmann::ordered_json>(nlohmann::ordered_json::parse(tools.dump())));
  ToolCallParser::Piece piece = parser.push(text);
  ToolCallParser::Piece rest = parser.flush();
  for (auto& c : rest.calls) piece.calls.push_back(std::move(c));
  return piece.calls;
}

// The text between two markers (after the last `from` before `to`).
std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const size_t end = text.find(to);
  const size_t start = text.rfind(from, end);
  if (start == std::string::npos || end == std::string::npos) return "";
  return text.substr(start + from.size(), end - start - from.size());
}

// DeepSeek-R1's own template: forced calls come back as its marked, fenced sections; the round trip renders them
// back (the template concatenates the arguments as text and renders calls only for a null content, so the server
// must hand it both as such), and what it renders parses back into the same calls.
TEST_F(ToolCallsTest, DeepSeekCallsAndTheirRoundTripThroughTheRealTemplate) {
  const std::string source =
      read_file(kairo::testing::shared_path("chat-templates/deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"));
  ASSERT_EQ(detect_tool_call_format(source), ToolCallFormat::DeepSeek);
  const auto render = [source](const ChatTemplateInput& t) {
    return jinja::apply_chat_template(source, t.messages, t.tools, t.add_generation_prompt, "<s>", "</s>");
  };
  ChatTemplateTraits traits = chat_template_traits(source);  // arguments as text
  traits.thinks = false;  // <think> is no single token in this vocabulary: the grammar holds from the first token
  start(ToolCallFormat::DeepSeek, render, traits);
  int n_checked = 0;
  for (int seed = 0; seed < 6; ++seed) {
    const auto r = chat({{"tool_choice", "required"}, {"temperature", 1}, {"seed", seed}, {"max_tokens", 200}});
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << choice;
    EXPECT_TRUE(choice["message"]["content"].is_null()) << choice;
    const json calls = choice["message"]["tool_calls"];
    ASSERT_GE(calls.size(), 1u) << choice;
    for (const json& call : calls) expect_valid_call(call);
    json messages = json::array({{{"role", "user"}, {"content", "weather in Paris?"}}, choice["message"]});
    messages.push_back({{"role", "tool"}, {"tool_call_id", calls[0]["id"]}, {"content", "sunny"}});
    const auto tokenized = request(port_, "POST", "/tokenize", json{{"messages", messages}}.dump());
    ASSERT_EQ(tokenized.status, 200) << tokenized.body;
    // What the template makes of the history as Hugging Face hands it over: content null, arguments a string.
    auto text = jinja::apply_chat_template(source, nlohmann::ordered_json::parse(messages.dump()),
                                           nlohmann::ordered_json(), true, "<s>", "</s>");
    ASSERT_TRUE(text.ok()) << text.error().message;
    EXPECT_NE(text->find("<｜tool▁sep｜>" + calls[0]["function"]["name"].get<std::string>() + "\n```json\n" +
                         calls[0]["function"]["arguments"].get<std::string>() + "\n```"),
              std::string::npos)
        << *text;
    const bool bos = tokenizer_->add_bos_by_default() && text->rfind("<s>", 0) != 0;
    EXPECT_EQ(tokenized.json()["tokens"], json(tokenizer_->encode(*text, bos, /*parse_special=*/true)));
    const auto back = parse_back(ToolCallFormat::DeepSeek, between(*text, "<｜Assistant｜>", "<｜tool▁outputs▁begin｜>"),
                                 tools());
    ASSERT_EQ(back.size(), calls.size()) << *text;
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].name, calls[i]["function"]["name"]);
      EXPECT_EQ(back[i].arguments, calls[i]["function"]["arguments"]);
    }
    ++n_checked;
  }
  EXPECT_GE(n_checked, 3);
}

// Qwen3-Coder's XML calls: forced calls whose string parameters are raw text; then the real template (too long for
// this model's context to generate under, so a compact one serves the calls) renders the round trip, and its
// rendering parses back into the same calls.
TEST_F(ToolCallsTest, Qwen3CoderXmlCallsAndTheirRoundTripThroughTheRealTemplate) {
  const std::string source = read_file(std::string(KAIRO_SOURCE_DIR) + "/tests/data/chat-templates/Qwen-Qwen3-Coder.jinja");
  ASSERT_EQ(detect_tool_call_format(source), ToolCallFormat::Qwen3CoderXml);
  start(ToolCallFormat::Qwen3CoderXml);
  std::vector<json> replies;
  for (int seed = 0; seed < 6; ++seed) {
    const auto r = chat({{"tool_choice", "required"}, {"parallel_tool_calls", seed % 2 == 0}, {"temperature", 1},
                         {"seed", seed}, {"max_tokens", 200}});
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    if (choice["finish_reason"] == "length") continue;
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << choice;
    EXPECT_TRUE(choice["message"]["content"].is_null()) << choice;
    ASSERT_GE(choice["message"]["tool_calls"].size(), 1u) << choice;
    for (const json& call : choice["message"]["tool_calls"]) expect_valid_call(call);
    replies.push_back(choice["message"]);
  }
  EXPECT_GE(replies.size(), 3u);
  start(ToolCallFormat::Qwen3CoderXml, [source](const ChatTemplateInput& t) {
    return jinja::apply_chat_template(source, t.messages, t.tools, t.add_generation_prompt, "", "");
  });
  for (const json& message : replies) {
    json messages = json::array({{{"role", "user"}, {"content", "weather in Paris?"}}, message});
    for (size_t i = 0; i < message["tool_calls"].size(); ++i) messages.push_back({{"role", "tool"}, {"content", "done"}});
    const auto tokenized = request(port_, "POST", "/tokenize", json{{"messages", messages}, {"tools", tools()}}.dump());
    ASSERT_EQ(tokenized.status, 200) << tokenized.body;
    // The template iterates over the arguments: it gets them as objects.
    nlohmann::ordered_json as_objects = nlohmann::ordered_json::parse(messages.dump());
    for (auto& c : as_objects[1]["tool_calls"]) {
      c["function"]["arguments"] = nlohmann::ordered_json::parse(c["function"]["arguments"].get<std::string>());
    }
    auto text = jinja::apply_chat_template(source, as_objects, nlohmann::ordered_json::parse(tools().dump()), true, "", "");
    ASSERT_TRUE(text.ok()) << text.error().message;
    EXPECT_EQ(tokenized.json()["tokens"], json(tokenizer_->encode(*text, tokenizer_->add_bos_by_default(), true)));
    const json calls = message["tool_calls"];
    const auto back = parse_back(ToolCallFormat::Qwen3CoderXml,
                                 between(*text, "<|im_start|>assistant", "<|im_end|>\n<|im_start|>user\n<tool_response>"),
                                 tools());
    ASSERT_EQ(back.size(), calls.size()) << *text;
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].name, calls[i]["function"]["name"]);
      EXPECT_EQ(json::parse(back[i].arguments), json::parse(calls[i]["function"]["arguments"].get<std::string>()));
    }
  }
}

}  // namespace
}  // namespace kairo::server::testing
