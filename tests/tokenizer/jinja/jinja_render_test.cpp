// Feature-by-feature checks of the Jinja interpreter against Python Jinja2's own renders (render_cases.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "render_cases.h"
#include "tokenizer/jinja/chat_template.h"

namespace kairo::jinja {
namespace {

RenderOptions test_options() {
  RenderOptions opt;
  opt.strftime_now_date = "2026-01-15";
  return opt;
}

class RenderCaseTest : public ::testing::TestWithParam<testing::RenderCase> {};

TEST_P(RenderCaseTest, MatchesPythonJinja2) {
  const auto& c = GetParam();
  auto ctx = nlohmann::ordered_json::parse(c.context_json);
  auto r = render(c.source, ctx, test_options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Jinja, RenderCaseTest, ::testing::ValuesIn(testing::render_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

class ErrorCaseTest : public ::testing::TestWithParam<testing::ErrorCase> {};

TEST_P(ErrorCaseTest, RaisesLikePythonJinja2) {
  const auto& c = GetParam();
  auto ctx = nlohmann::ordered_json::parse(c.context_json);
  auto r = render(c.source, ctx, test_options());
  ASSERT_FALSE(r.ok()) << "rendered: " << *r;
  EXPECT_NE(r.error().message.find(c.jinja_message), std::string::npos)
      << "got: " << r.error().message << "\nwant it to contain: " << c.jinja_message;
}

INSTANTIATE_TEST_SUITE_P(Jinja, ErrorCaseTest, ::testing::ValuesIn(testing::error_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(JinjaRender, ErrorsNameTheTemplateLine) {
  auto r = render("line1\n{{ 'a' }}\n{{ 1 + none }}", nlohmann::ordered_json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "unsupported operand type(s) for +: 'int' and 'NoneType' (template line 3)");
  auto s = render("{% if true %}\n{{ x ) }}", nlohmann::ordered_json::object());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "template syntax error: unexpected ')' (template line 2)");
}

TEST(JinjaRender, RaiseExceptionMessageIsVerbatim) {
  auto r = render("{{ raise_exception('System role not supported') }}", nlohmann::ordered_json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "System role not supported");
}

TEST(JinjaRender, TrimOptionsCanBeTurnedOff) {
  RenderOptions opt;
  opt.trim_blocks = false;
  opt.lstrip_blocks = false;
  auto r = render("a\n  {% if true %}\n  b\n  {% endif %}\n", nlohmann::ordered_json::object(), opt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "a\n  \n  b\n  ");  // the template's final newline is dropped, as Jinja2 does
}

TEST(JinjaRender, ContextKeyOrderIsKeptByTojson) {
  auto ctx = nlohmann::ordered_json::parse(R"({"t": {"zeta": 1, "alpha": {"y": 2, "b": 3}}})");
  auto r = render("{{ t|tojson }}", ctx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, R"({"zeta": 1, "alpha": {"y": 2, "b": 3}})");
}

TEST(JinjaRender, NonObjectContextIsRejected) {
  auto r = render("x", nlohmann::ordered_json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("must be a JSON object"), std::string::npos);
}

TEST(JinjaRender, ApplyChatTemplateOmitsNullTools) {
  const std::string tmpl =
      "{{ bos_token }}{% if tools is defined %}T{% endif %}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
      "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}";
  auto msgs = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  auto r = apply_chat_template(tmpl, msgs, nullptr, true, "<s>", "</s>", {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "<s><user>hi<assistant></s>");
  auto t = apply_chat_template(tmpl, msgs, nlohmann::ordered_json::array(), false, "", "", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, "T<user>hi");
}

}  // namespace
}  // namespace kairo::jinja
