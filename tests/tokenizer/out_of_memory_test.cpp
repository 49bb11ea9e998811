// Tokenizer::from_gguf returns a Result: a vocabulary that cannot be built for want of memory (forced by capping a
// forked child's address space) is an Error naming the file, not a std::bad_alloc out of the load.
#include <gtest/gtest.h>

#include "address_space_cap.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

TEST(TokenizerOutOfMemory, AVocabularyThatCannotBeBuiltIsAnError) {
  if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  const std::string path = testing::shared_path("vocab/ggml-vocab-gpt-2.gguf");  // 50k tokens and merges
  std::optional<gguf::File> file;
  const auto run = kairo::testing::run_with_address_space_cap(
      1ull << 20,
      [&] {
        kairo::testing::exhaust_free_memory(256 << 10);  // room for a message, not for 50k tokens
        auto tok = Tokenizer::from_gguf(*file);
        return tok.ok() ? std::string("built") : tok.error().message;
      },
      [&] {
        auto f = gguf::File::open(path);
        if (f.ok()) file = std::move(f).value();
      });
  ASSERT_TRUE(run.ok()) << run.how();
  const std::string& msg = run.output;
  EXPECT_EQ(msg.rfind(path + ": out of memory while building the tokenizer: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("; this process may map at most "), std::string::npos) << msg;
  const std::string fix = "; free memory (kairo plan --model FILE predicts what the model needs)";
  EXPECT_EQ(msg.substr(msg.size() - std::min(msg.size(), fix.size())), fix) << msg;
}

}  // namespace
}  // namespace kairo::tokenizer
