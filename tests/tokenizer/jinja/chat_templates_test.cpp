// Every case of tests/data/chat-templates/expected.json (real Hugging Face templates rendered by Python Jinja2)
// must render byte-identically, and the cases that raised in Jinja2 must raise here with the same message.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/chat_template.h"

namespace kairo::jinja {
namespace {

const std::string kDir = std::string(KAIRO_SOURCE_DIR) + "/tests/data/chat-templates/";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Case {
  std::string name;
  nlohmann::ordered_json json;
};

// expected.json: the shared reference renders; families.json: the newer families' templates (Qwen3's thinking
// switch and reasoning_content, gpt-oss's harmony channels and reasoning effort), rendered by render_families.py.
std::vector<Case> load_cases(const char* file = "expected.json") {
  std::vector<Case> out;
  std::ifstream f(kDir + file);
  if (!f) return out;
  auto all = nlohmann::ordered_json::parse(f);
  for (const auto& c : all["cases"]) {
    std::string name = c["template"].get<std::string>() + "__" + c["case"].get<std::string>();
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    out.push_back({name, c});
  }
  return out;
}

TEST(ChatTemplates, ExpectedJsonHasAllCases) {
  auto cases = load_cases();
  ASSERT_EQ(cases.size(), 36u) << "missing " << kDir << "expected.json";
  int n_errors = 0;
  for (const auto& c : cases) n_errors += c.json.contains("expected_error");
  EXPECT_EQ(n_errors, 2);
}

class ChatTemplateCase : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateCase, RendersLikeJinja2) {
  const auto& c = GetParam().json;
  std::string tmpl = read_file(kDir + c["template"].get<std::string>() + ".jinja");
  ASSERT_FALSE(tmpl.empty());
  RenderOptions opt;
  opt.strftime_now_date = "2026-01-15";
  auto r = render(tmpl, c["context"], opt);
  if (c.contains("expected_error")) {
    ASSERT_FALSE(r.ok()) << "expected an error, rendered:\n" << *r;
    std::string want = c["expected_error"].get<std::string>();
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  } else {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, c["expected"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, ChatTemplateCase, ::testing::ValuesIn(load_cases()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Families, ChatTemplateCase, ::testing::ValuesIn(load_cases("families.json")),
                         [](const auto& info) { return info.param.name; });

TEST(ChatTemplates, FamiliesJsonHasAllCases) { EXPECT_EQ(load_cases("families.json").size(), 14u); }

TEST(ChatTemplates, ApplyChatTemplateMatchesFullContextRender) {
  // The chat-level helper must build the same variables expected.json's contexts hold.
  auto cases = load_cases();
  ASSERT_FALSE(cases.empty());
  RenderOptions opt;
  opt.strftime_now_date = "2026-01-15";
  int checked = 0;
  for (const auto& cs : cases) {
    const auto& c = cs.json;
    if (!c.contains("expected")) continue;
    const auto& ctx = c["context"];
    std::string tmpl = read_file(kDir + c["template"].get<std::string>() + ".jinja");
    auto r = apply_chat_template(tmpl, ctx["messages"], ctx.contains("tools") ? ctx["tools"] : nlohmann::ordered_json(),
                                 ctx["add_generation_prompt"].get<bool>(), ctx["bos_token"].get<std::string>(),
                                 ctx["eos_token"].get<std::string>(), opt);
    ASSERT_TRUE(r.ok()) << cs.name << ": " << r.error().message;
    EXPECT_EQ(*r, c["expected"].get<std::string>()) << cs.name;
    ++checked;
  }
  EXPECT_EQ(checked, 34);
}

}  // namespace
}  // namespace kairo::jinja
