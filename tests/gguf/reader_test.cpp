// Round trips through the writer and reader: every value type, arrays, tensor infos, alignment, data placement.
#include <gtest/gtest.h>

#include <cstdio>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "test_paths.h"

namespace kairo::gguf {
namespace {

TEST(GgufReader, RoundTripsEveryValueType) {
  Writer w;
  w.set("u8", Value::uint(ValueType::UINT8, 200));
  w.set("i8", Value::sint(ValueType::INT8, -100));
  w.set("u16", Value::uint(ValueType::UINT16, 60000));
  w.set("i16", Value::sint(ValueType::INT16, -30000));
  w.set("u32", Value::u32(4000000000u));
  w.set("i32", Value::i32(-2000000000));
  w.set("u64", Value::uint(ValueType::UINT64, 1ull << 63));
  w.set("i64", Value::sint(ValueType::INT64, -(1ll << 62)));
  w.set("f32", Value::f32(1.5f));
  w.set("f64", Value::real(ValueType::FLOAT64, -2.25));
  w.set("bool", Value::boolean(true));
  w.set("str", Value::string("héllo"));
  w.set("arr", Value::string_array({"a", "", "ccc"}));
  w.set("nested", Value::array(ValueType::ARRAY, {Value::i32_array({1, 2}), Value::i32_array({})}));
  const auto bytes = w.to_bytes();
  auto f = File::parse(bytes.data(), bytes.size(), "mem");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 14u);
  EXPECT_EQ(*f->find("u8")->as_uint(), 200u);
  EXPECT_EQ(*f->find("i8")->as_int(), -100);
  EXPECT_EQ(*f->find("u16")->as_uint(), 60000u);
  EXPECT_EQ(*f->find("i16")->as_int(), -30000);
  EXPECT_EQ(*f->find("u32")->as_uint(), 4000000000u);
  EXPECT_EQ(*f->find("i32")->as_int(), -2000000000);
  EXPECT_EQ(*f->find("u64")->as_uint(), 1ull << 63);
  EXPECT_FALSE(f->find("u64")->as_int().has_value()) << "2^63 does not fit int64";
  EXPECT_EQ(*f->find("i64")->as_int(), -(1ll << 62));
  EXPECT_FALSE(f->find("i64")->as_uint().has_value());
  EXPECT_EQ(*f->find("f32")->as_float(), 1.5);
  EXPECT_EQ(*f->find("f64")->as_float(), -2.25);
  EXPECT_EQ(*f->find("bool")->as_bool(), true);
  EXPECT_EQ(*f->find("str")->as_string(), "héllo");
  const Value* arr = f->find("arr");
  ASSERT_EQ(arr->type(), ValueType::ARRAY);
  ASSERT_EQ(arr->items().size(), 3u);
  EXPECT_EQ(*arr->items()[2].as_string(), "ccc");
  const Value* nested = f->find("nested");
  ASSERT_EQ(nested->items().size(), 2u);
  EXPECT_EQ(*nested->items()[0].items()[1].as_int(), 2);
  EXPECT_EQ(f->find("missing"), nullptr);
}

TEST(GgufReader, TypedGettersNameKeyAndType) {
  Writer w;
  w.set("llama.block_count", Value::string("four"));
  const auto bytes = w.to_bytes();
  auto f = File::parse(bytes.data(), bytes.size(), "m.gguf");
  ASSERT_TRUE(f.ok());
  auto v = f->get_uint("llama.block_count");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "m.gguf: metadata key 'llama.block_count' should be a non-negative integer, but is string \"four\"");
  auto missing = f->get_uint("llama.context_length");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "m.gguf: required metadata key 'llama.context_length' is missing");
  EXPECT_EQ(*f->get_uint_or("llama.context_length", 7), 7u);
}

TEST(GgufReader, PlacesTensorDataWithCustomAlignment) {
  Writer w(64);
  std::vector<uint8_t> a(4 * 8), b(34 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(255 - i);
  w.add_tensor("a", DType::F32, {8}, a);
  w.add_tensor("b", DType::Q8_0, {32, 2}, b);
  const auto bytes = w.to_bytes();
  auto f = File::parse(bytes.data(), bytes.size(), "mem");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  const TensorInfo* ta = f->find_tensor("a");
  const TensorInfo* tb = f->find_tensor("b");
  ASSERT_TRUE(ta && tb);
  EXPECT_EQ(ta->n_bytes, 32u);
  EXPECT_EQ(tb->n_bytes, 68u);
  EXPECT_EQ(tb->n_rows(), 2);
  EXPECT_EQ(tb->offset, 64u);
  EXPECT_EQ(std::vector<uint8_t>(ta->data, ta->data + ta->n_bytes), a);
  EXPECT_EQ(std::vector<uint8_t>(tb->data, tb->data + tb->n_bytes), b);
}

TEST(GgufReader, WritesAndOpensFiles) {
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  w.add_tensor("t", DType::F16, {4}, std::vector<uint8_t>(8, 1));
  const std::string path = ::testing::TempDir() + "/kairo_writer_test.gguf";
  ASSERT_TRUE(w.write(path).ok());
  auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->tensors().size(), 1u);
  std::remove(path.c_str());
}

TEST(GgufReader, ReadsTheBundledDemoModel) {
  auto f = File::open(kairo::testing::demo_model_path());
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->find("tokenizer.ggml.tokens")->items().size(), 512u);
  EXPECT_NE(f->find_tensor("token_embd.weight"), nullptr);
}

}  // namespace
}  // namespace kairo::gguf
