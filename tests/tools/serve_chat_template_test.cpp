// `kairo serve --chat-template-file`: a template that cannot render a one-message chat is refused at startup with
// the Jinja error and what to do, never accepted and left to fail on every chat request. (That a working template
// drives the chat and tool-call formats is tested end to end in tests/e2e/openai_e2e.test.mjs.)
#include <gtest/gtest.h>

#include <fstream>

#include "run_command.h"
#include "test_paths.h"

namespace kairo {
namespace {

using testing::run_kairo;

using kairo::testing::demo_model_path;

std::string write_template(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ServeChatTemplate, ATemplateThatCannotRenderIsRefusedAtStartup) {
  const std::string broken = write_template("broken.jinja", "{% for m in messages %}{{ m.content }");
  auto r = run_kairo("serve --port 0 --model " + demo_model_path() + " --chat-template-file " + broken);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the chat template in " + broken + " cannot render a one-message chat"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("template line 1"), std::string::npos) << r.err;

  const std::string raising = write_template("raising.jinja", "{{ raise_exception('System role required') }}");
  r = run_kairo("serve --port 0 --model " + demo_model_path() + " --chat-template-file " + raising);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("System role required"), std::string::npos) << r.err;

  const std::string empty = write_template("empty.jinja", "");
  r = run_kairo("serve --port 0 --model " + demo_model_path() + " --chat-template-file " + empty);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the file is empty"), std::string::npos) << r.err;

  r = run_kairo("serve --port 0 --model " + demo_model_path() + " --chat-template-file /nonexistent/t.jinja");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent/t.jinja"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kairo
