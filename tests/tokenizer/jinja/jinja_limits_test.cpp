// The sandbox's resource limits: each runaway template stops with an error naming the RenderOptions field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/chat_template.h"

namespace kairo::jinja {
namespace {

std::string render_error(const std::string& src, const RenderOptions& opt = {}) {
  auto r = render(src, nlohmann::ordered_json::object(), opt);
  if (r.ok()) return "rendered " + std::to_string(r->size()) + " bytes";
  return r.error().message;
}

bool mentions(const std::string& msg, const std::string& what) { return msg.find(what) != std::string::npos; }

TEST(JinjaLimits, InfiniteMacroRecursion) {
  std::string msg = render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_TRUE(mentions(msg, "max_recursion_depth (64)")) << msg;
}

TEST(JinjaLimits, RecursionDepthIsConfigurable) {
  const std::string src = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}x{% endmacro %}{{ f(9) }}";
  RenderOptions opt;
  opt.max_recursion_depth = 10;
  auto ok = render(src, nlohmann::ordered_json::object(), opt);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(*ok, "xxxxxxxxxx");
  opt.max_recursion_depth = 9;
  EXPECT_TRUE(mentions(render_error(src, opt), "max_recursion_depth (9)"));
}

TEST(JinjaLimits, ExponentialMacroFanOutStopsAtMacroCallLimit) {
  RenderOptions opt;
  opt.max_macro_calls = 5000;
  std::string msg = render_error(
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}", opt);
  EXPECT_TRUE(mentions(msg, "max_macro_calls (5000)")) << msg;
}

TEST(JinjaLimits, HugeRangeIsRefusedBeforeAllocating) {
  std::string msg = render_error("{% for i in range(100000000) %}x{% endfor %}");
  EXPECT_TRUE(mentions(msg, "max_loop_iterations (1000000")) << msg;
}

TEST(JinjaLimits, NestedLoopsCountTotalIterations) {
  RenderOptions opt;
  opt.max_loop_iterations = 10000;
  std::string msg = render_error("{% for i in range(200) %}{% for j in range(200) %}{% endfor %}{% endfor %}", opt);
  EXPECT_TRUE(mentions(msg, "more than max_loop_iterations (10000) loop iterations")) << msg;
  auto ok = render("{% for i in range(99) %}{% for j in range(100) %}{% endfor %}{% endfor %}done",
                   nlohmann::ordered_json::object(), opt);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(*ok, "done");
}

TEST(JinjaLimits, DefaultIterationLimitStopsLongLoops) {
  std::string msg = render_error(
      "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(2) %}{% endfor %}{% endfor %}"
      "{% endfor %}");
  EXPECT_TRUE(mentions(msg, "max_loop_iterations (1000000)")) << msg;
}

TEST(JinjaLimits, OutputBomb) {
  std::string msg = render_error("{% for i in range(100000) %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}");
  EXPECT_TRUE(mentions(msg, "template output is larger than max_output_bytes (4194304 bytes)")) << msg;
}

TEST(JinjaLimits, StringDoublingBomb) {
  std::string msg = render_error(
      "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}");
  EXPECT_TRUE(mentions(msg, "string larger than max_output_bytes")) << msg;
  msg = render_error("{{ 'abc' * 100000000000 }}");
  EXPECT_TRUE(mentions(msg, "string larger than max_output_bytes")) << msg;
  msg = render_error("{{ ('a' * 4000)|replace('a', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb') }}");
  EXPECT_TRUE(mentions(msg, "string larger than max_output_bytes")) << msg;
}

TEST(JinjaLimits, ListDoublingBomb) {
  std::string msg = render_error(
      "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}");
  EXPECT_TRUE(mentions(msg, "list longer than max_loop_iterations")) << msg;
  msg = render_error("{{ ([1] * 10000000000)|length }}");
  EXPECT_TRUE(mentions(msg, "list longer than max_loop_iterations")) << msg;
}

TEST(JinjaLimits, CapturedOutputIsBoundedToo) {
  RenderOptions opt;
  opt.max_output_bytes = 1000;
  std::string msg = render_error("{% set x %}{% for i in range(2000) %}y{% endfor %}{% endset %}{{ x|length }}", opt);
  EXPECT_TRUE(mentions(msg, "max_output_bytes (1000 bytes)")) << msg;
}

TEST(JinjaLimits, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  std::string deep(5000, '(');
  std::string msg = render_error("{{ " + deep + "1" + std::string(5000, ')') + " }}");
  EXPECT_TRUE(mentions(msg, "nests expressions or blocks deeper than 128 levels")) << msg;
  std::string ifs;
  for (int i = 0; i < 3000; ++i) ifs += "{% if true %}";
  msg = render_error(ifs);
  EXPECT_TRUE(mentions(msg, "deeper than 128 levels")) << msg;
}

TEST(JinjaLimits, DeeplyNestedDataIsRefused) {
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "[";
  for (int i = 0; i < 1000; ++i) deep += "]";
  auto r = render("{{ x|length }}", nlohmann::ordered_json::parse("{\"x\": " + deep + "}"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(mentions(r.error().message, "deeper than 256 levels")) << r.error().message;
  std::string msg = render_error(
      "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}");
  EXPECT_TRUE(mentions(msg, "deeper than 256 levels")) << msg;
}

TEST(JinjaLimits, NamespaceCannotContainItself) {
  std::string msg = render_error("{% set ns = namespace() %}{% set ns.self = ns %}");
  EXPECT_TRUE(mentions(msg, "namespace cannot be stored inside a namespace")) << msg;
  msg = render_error("{% set ns = namespace() %}{% set ns.l = [ns] %}");
  EXPECT_TRUE(mentions(msg, "namespace cannot be stored inside a namespace")) << msg;
}

TEST(JinjaLimits, NoHostAccess) {
  // Python-internals escapes used against Jinja sandboxes resolve to nothing here.
  auto r = render("[{{ ''.__class__ }}][{{ range.__globals__ }}][{{ namespace.__init__ }}][{{ self }}][{{ config }}]",
                  nlohmann::ordered_json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "[][][][][]");
  EXPECT_TRUE(mentions(render_error("{% include 'x' %}"), "'include' is not available"));
  EXPECT_TRUE(mentions(render_error("{% import 'x' as y %}"), "'import' is not available"));
}

}  // namespace
}  // namespace kairo::jinja
