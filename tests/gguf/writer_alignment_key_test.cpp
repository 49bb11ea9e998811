// Regression (found while building the bad-model corpus): a caller that sets "general.alignment" itself, as tools
// copying metadata from another file do, must still get a file that parses. The Writer writes that key from its own
// alignment and skips the caller's copy, so the metadata count has to skip it too.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace kairo::gguf {
namespace {

TEST(WriterAlignmentKey, CallerSetAlignmentKeyStillParses) {
  for (uint32_t alignment : {32u, 64u}) {
    Writer w(alignment);
    w.set("general.alignment", Value::u32(alignment));
    w.set("a", Value::u32(1));
    w.add_tensor("t", DType::F32, {4}, std::vector<uint8_t>(16, 0));
    const auto bytes = w.to_bytes();
    auto f = File::parse(bytes.data(), bytes.size(), "w.gguf");
    ASSERT_TRUE(f.ok()) << "alignment " << alignment << ": " << f.error().message;
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->metadata().size(), 2u);
    ASSERT_NE(f->find("a"), nullptr);
  }
}

}  // namespace
}  // namespace kairo::gguf
