// server::load_chat_template, shared by `kairo serve` and `kairo chat`: the template file over the model's, ChatML when
// there is none, and a template that cannot render refused up front with what to change.
#include "server/chat_template_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "gguf/gguf_file.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {
namespace {

class ChatTemplateLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto file = gguf::File::open(kairo::testing::demo_model_path());
    ASSERT_TRUE(file.ok()) << file.error().message;
    file_ = std::make_unique<gguf::File>(std::move(*file));
    auto tok = tokenizer::Tokenizer::from_gguf(*file_);
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    tok_ = std::move(*tok);
  }
  void TearDown() override {
    if (!template_path_.empty()) std::remove(template_path_.c_str());
  }
  // A template file of this process's own (ctest runs two test processes at once).
  std::string write_template(const std::string& text) {
    template_path_ = ::testing::TempDir() + "kairo_loader_" + std::to_string(getpid()) + ".jinja";
    std::ofstream(template_path_) << text;
    return template_path_;
  }
  std::unique_ptr<gguf::File> file_;
  std::unique_ptr<tokenizer::Tokenizer> tok_;
  std::string template_path_;
};

TEST_F(ChatTemplateLoaderTest, AModelWithoutATemplateGetsChatML) {
  auto loaded = load_chat_template(*file_, *tok_, "");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_FALSE(loaded->render);  // chat_prompt_tokens renders ChatML for an empty template
}

TEST_F(ChatTemplateLoaderTest, TheFileRendersWithTheRequestsKwargs) {
  const std::string path = write_template(
      "{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{% if flavour %}<{{ flavour }}>{% endif %}");
  auto loaded = load_chat_template(*file_, *tok_, path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_TRUE(loaded->render);
  const nlohmann::ordered_json messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  const nlohmann::ordered_json no_tools;
  const nlohmann::ordered_json kwargs = {{"flavour", "mint"}};
  auto text = loaded->render(ChatTemplateInput{messages, no_tools, true, kwargs});
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "[user:hi]<mint>");
}

TEST_F(ChatTemplateLoaderTest, ATemplateThatCannotRenderIsRefusedWithTheFix) {
  const std::string path = write_template("{{ raise_exception('no') }}");
  auto loaded = load_chat_template(*file_, *tok_, path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("the chat template in " + path + " cannot render a one-message chat"),
            std::string::npos)
      << loaded.error().message;
  EXPECT_NE(loaded.error().message.find("--chat-template-file"), std::string::npos);
}

TEST_F(ChatTemplateLoaderTest, AMissingOrEmptyFileIsNamed) {
  auto missing = load_chat_template(*file_, *tok_, "/nonexistent/kairo.jinja");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--chat-template-file /nonexistent/kairo.jinja: cannot open the file");
  const std::string path = write_template("");
  auto empty = load_chat_template(*file_, *tok_, path);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "--chat-template-file " + path + ": the file is empty");
}

}  // namespace
}  // namespace kairo::server
