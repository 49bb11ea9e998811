// `kairo template` as a user runs it.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace kairo {
namespace {

using testing::run_kairo;

const std::string kTemplates = std::string(KAIRO_SOURCE_DIR) + "/tests/data/chat-templates/";

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/kairo_template_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// A GGUF v3 file holding only string metadata (the template command needs nothing else).
std::string write_gguf(const std::string& name, const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) {
    u64(s.size());
    b += s;
  };
  u32(0x46554747);  // "GGUF"
  u32(3);
  u64(0);  // tensors
  u64(kv.size());
  for (const auto& [k, v] : kv) {
    str(k);
    u32(8);  // STRING
    str(v);
  }
  while (b.size() % 32) b += '\0';
  return write_temp(name, b);
}

nlohmann::ordered_json expected_case(const std::string& tmpl, const std::string& case_name) {
  std::ifstream f(kTemplates + "expected.json");
  auto all = nlohmann::ordered_json::parse(f);
  for (const auto& c : all["cases"])
    if (c["template"] == tmpl && c["case"] == case_name) return c;
  return {};
}

TEST(TemplateCommand, RendersATemplateFileExactly) {
  auto c = expected_case("meta-llama-Llama-3.2-3B-Instruct", "tools");
  ASSERT_FALSE(c.is_null());
  const std::string ctx = write_temp("ctx_llama.json", c["context"].dump());
  auto r = run_kairo("template --template-file " + kTemplates + "meta-llama-Llama-3.2-3B-Instruct.jinja" +
                     " --context-file " + ctx + " --date 2026-01-15");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, c["expected"].get<std::string>());  // byte for byte, no newline added
  EXPECT_EQ(r.err, "");
}

TEST(TemplateCommand, ReadsTheTemplateFromTheModel) {
  auto c = expected_case("Qwen-Qwen2.5-7B-Instruct", "tools");
  ASSERT_FALSE(c.is_null());
  std::ifstream t(kTemplates + "Qwen-Qwen2.5-7B-Instruct.jinja");
  std::stringstream ss;
  ss << t.rdbuf();
  const std::string model = write_gguf("qwen.gguf", {{"general.architecture", "qwen2"}, {"tokenizer.chat_template", ss.str()}});
  const std::string ctx = write_temp("ctx_qwen.json", c["context"].dump());
  auto r = run_kairo("template --model " + model + " --context-file " + ctx);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, c["expected"].get<std::string>());
}

TEST(TemplateCommand, TemplateErrorsExitOneWithTheMessage) {
  auto c = expected_case("google-gemma-2-2b-it", "system_user");
  ASSERT_FALSE(c.is_null());
  const std::string ctx = write_temp("ctx_gemma.json", c["context"].dump());
  auto r = run_kairo("template --template-file " + kTemplates + "google-gemma-2-2b-it.jinja --context-file " + ctx);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: System role not supported\n");
}

TEST(TemplateCommand, BadInputsAreClearErrors) {
  const std::string ctx = write_temp("ctx_min.json", R"({"messages": []})");
  auto r = run_kairo("template --template-file /nonexistent.jinja --context-file " + ctx);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open --template-file '/nonexistent.jinja'"), std::string::npos) << r.err;

  const std::string bad_json = write_temp("ctx_bad.json", "{not json");
  const std::string tmpl = write_temp("t.jinja", "{{ messages|length }}");
  r = run_kairo("template --template-file " + tmpl + " --context-file " + bad_json);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not valid JSON"), std::string::npos) << r.err;

  const std::string no_template = write_gguf("plain.gguf", {{"general.architecture", "llama"}});
  r = run_kairo("template --model " + no_template + " --context-file " + ctx);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no tokenizer.chat_template"), std::string::npos) << r.err;

  const std::string syntax = write_temp("syntax.jinja", "ok\n{% for x in messages %}");
  r = run_kairo("template --template-file " + syntax + " --context-file " + ctx);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("template syntax error: Unexpected end of template"), std::string::npos) << r.err;

  r = run_kairo("template --template-file " + tmpl + " --context-file " + ctx);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0");
}

}  // namespace
}  // namespace kairo
