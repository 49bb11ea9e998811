// Writer's streaming mode: the same bytes as the in-memory writer, and errors for wrong amounts of data.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace kairo::gguf {
namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST(StreamWriter, WritesTheSameBytesAsTheInMemoryWriter) {
  for (uint32_t alignment : {32u, 64u}) {
    const auto a = pattern(3 * 4, 1);        // F32 [3]: 12 bytes, padding follows
    const auto b = pattern(2 * 34, 2);       // Q8_0 [64]: 2 blocks
    const auto c = pattern(5 * 2 * 4, 3);    // F32 [5, 2]
    Writer mem(alignment);
    mem.set("general.architecture", Value::string("llama"));
    mem.add_tensor("a", DType::F32, {3}, a);
    mem.add_tensor("b", DType::Q8_0, {64}, b);
    mem.add_tensor("c", DType::F32, {5, 2}, c);

    Writer streamed(alignment);
    streamed.set("general.architecture", Value::string("llama"));
    streamed.add_tensor("a", DType::F32, {3}, a);  // in memory: written by the stream when its turn comes
    streamed.add_tensor_info("b", DType::Q8_0, {64});
    streamed.add_tensor_info("c", DType::F32, {5, 2});
    const std::string path = ::testing::TempDir() + "/kairo_stream.gguf";
    auto stream = streamed.open_stream(path);
    ASSERT_TRUE(stream.ok()) << stream.error().message;
    EXPECT_EQ(stream->current_tensor(), "b");
    ASSERT_TRUE(stream->write(b.data(), 30).ok());  // chunks need not follow block boundaries
    ASSERT_TRUE(stream->write(b.data() + 30, b.size() - 30).ok());
    EXPECT_EQ(stream->current_tensor(), "c");
    ASSERT_TRUE(stream->write(c.data(), c.size()).ok());
    EXPECT_EQ(stream->current_tensor(), "");
    ASSERT_TRUE(stream->finish().ok());
    EXPECT_EQ(read_all(path), mem.to_bytes()) << "alignment " << alignment;
    auto f = File::open(path);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(std::vector<uint8_t>(f->find_tensor("c")->data, f->find_tensor("c")->data + c.size()), c);
    std::remove(path.c_str());
  }
}

TEST(StreamWriter, RefusesTooManyBytesAndIncompleteTensors) {
  Writer w;
  w.add_tensor_info("x", DType::F32, {4});
  const std::string path = ::testing::TempDir() + "/kairo_stream_bad.gguf";
  {
    auto s = w.open_stream(path);
    ASSERT_TRUE(s.ok());
    const auto bytes = pattern(20, 0);
    const Status st = s->write(bytes.data(), 20);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("tensor 'x' holds 16 bytes but 20 were written"), std::string::npos)
        << st.error().message;
    ASSERT_TRUE(s->write(bytes.data(), 8).ok());
    const Status fin = s->finish();
    ASSERT_FALSE(fin.ok());
    EXPECT_NE(fin.error().message.find("tensor 'x' is incomplete (8 of 16 bytes written)"), std::string::npos)
        << fin.error().message;
  }
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
}

TEST(StreamWriter, AnAbandonedStreamLeavesNoFile) {
  Writer w;
  w.add_tensor_info("x", DType::F32, {4});
  const std::string path = ::testing::TempDir() + "/kairo_stream_abandoned.gguf";
  {
    auto s = w.open_stream(path);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(std::ifstream(path + ".tmp").good());
  }
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
}

}  // namespace
}  // namespace kairo::gguf
