// Corrupt and hostile GGUF files: each must give an error naming the file, the offset and what is wrong -- never a
// crash, an abort, a huge allocation or a hang. Runs under ASan+UBSan in CI.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "raw_builder.h"

namespace kairo::gguf {
namespace {

using testing::RawBuilder;
constexpr uint64_t kHuge = std::numeric_limits<uint64_t>::max();

std::string parse_error(const std::vector<uint8_t>& bytes) {
  auto f = File::parse(bytes.data(), bytes.size(), "bad.gguf");
  return f.ok() ? std::string("<parsed without error>") : f.error().message;
}

// A valid model-like file: two metadata keys, two tensors.
std::vector<uint8_t> valid_file() {
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  w.set("tokenizer.ggml.tokens", Value::string_array({"<unk>", "<s>", "</s>", "a", "b"}));
  w.add_tensor("token_embd.weight", DType::F32, {4, 5}, std::vector<uint8_t>(80, 0));
  w.add_tensor("blk.0.attn_q.weight", DType::Q4_0, {32, 2}, std::vector<uint8_t>(36, 0));
  return w.to_bytes();
}

TEST(GgufCorrupt, TruncatedAtEveryOffsetFailsCleanly) {
  const auto full = valid_file();
  auto ok = File::parse(full.data(), full.size(), "ok");
  ASSERT_TRUE(ok.ok());
  // The writer pads after the last tensor; a cut inside that padding still leaves a complete file.
  const TensorInfo& last = ok->tensors().back();
  const size_t data_end = ok->data_offset() + last.offset + last.n_bytes;
  for (size_t n = 0; n < data_end; ++n) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
    const std::string err = parse_error(cut);
    ASSERT_EQ(err.rfind("bad.gguf: offset ", 0), 0u) << "cut at " << n << ": " << err;
  }
}

TEST(GgufCorrupt, EmptyFile) { EXPECT_EQ(parse_error({}), "bad.gguf: offset 0: file is empty, expected a GGUF model"); }

TEST(GgufCorrupt, BadMagic) {
  RawBuilder b;
  b.put<uint32_t>(0x464c457f).put<uint32_t>(3);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 0: not a GGUF file (magic is \"\\x7fELF\", expected \"GGUF\")");
}

TEST(GgufCorrupt, UnsupportedVersions) {
  EXPECT_EQ(parse_error(RawBuilder().header(0, 0, 1).bytes),
            "bad.gguf: offset 4: GGUF version 1 is not supported (only 2 and 3); re-convert the model");
  EXPECT_EQ(parse_error(RawBuilder().header(0, 0, 99).bytes),
            "bad.gguf: offset 4: unsupported GGUF version 99 (supported: 2, 3)");
  EXPECT_EQ(parse_error(RawBuilder().header(0, 0, 0x03000000).bytes),
            "bad.gguf: offset 4: big-endian GGUF files are not supported; use a little-endian conversion");
}

TEST(GgufCorrupt, VersionTwoIsAccepted) {
  RawBuilder b;
  b.header(0, 1, 2).kv_u32("a", 1);
  EXPECT_TRUE(File::parse(b.bytes.data(), b.bytes.size(), "v2").ok());
}

TEST(GgufCorrupt, HugeTensorCount) {
  EXPECT_EQ(parse_error(RawBuilder().header(kHuge, 0).bytes),
            "bad.gguf: offset 8: tensor count 18446744073709551615 is impossible for a 24-byte file (limit 1048576)");
}

TEST(GgufCorrupt, HugeMetadataCount) {
  EXPECT_EQ(parse_error(RawBuilder().header(0, kHuge).bytes),
            "bad.gguf: offset 16: metadata count 18446744073709551615 is impossible for a 24-byte file (limit "
            "1048576)");
}

TEST(GgufCorrupt, StringLengthBeyondTheFile) {
  RawBuilder b;
  b.header(0, 1).put<uint64_t>(1000).zeros(20);
  EXPECT_EQ(parse_error(b.bytes),
            "bad.gguf: offset 24: metadata key length 1000 is beyond the end of the file (20 bytes left)");
  RawBuilder v;
  v.header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(kHuge);
  EXPECT_EQ(parse_error(v.bytes),
            "bad.gguf: offset 37: string value length 18446744073709551615 exceeds the limit of 67108864 bytes");
}

TEST(GgufCorrupt, ValueTypeOutOfRange) {
  RawBuilder b;
  b.header(0, 1).str("k").put<uint32_t>(13).put<uint32_t>(0);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 33: key 'k': value type 13 is not a GGUF value type (0..12)");
}

TEST(GgufCorrupt, BoolOtherThanZeroOrOne) {
  RawBuilder b;
  b.header(0, 1).str("flag").put<uint32_t>(7).put<uint8_t>(2);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 40: key 'flag': bool value is 2, expected 0 or 1");
}

TEST(GgufCorrupt, ArrayCountThatCannotFit) {
  RawBuilder b;
  b.header(0, 1).str("arr").put<uint32_t>(9).put<uint32_t>(5).put<uint64_t>(1000000).zeros(16);
  EXPECT_EQ(parse_error(b.bytes),
            "bad.gguf: offset 43: key 'arr': array of 1000000 int32 elements cannot fit in the 16 bytes left");
  RawBuilder huge;
  huge.header(0, 1).str("arr").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(kHuge);
  EXPECT_EQ(parse_error(huge.bytes),
            "bad.gguf: offset 43: key 'arr': array length 18446744073709551615 exceeds the limit of 16777216 items");
}

TEST(GgufCorrupt, ArraysNestedTooDeep) {
  RawBuilder b;
  b.header(0, 1).str("arr").put<uint32_t>(9).put<uint32_t>(9).put<uint64_t>(1).put<uint32_t>(9).zeros(32);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 51: key 'arr': arrays nested deeper than 2 levels");
}

TEST(GgufCorrupt, DuplicateKey) {
  RawBuilder b;
  b.header(0, 2).kv_u32("a", 1).kv_u32("a", 2);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 41: duplicate metadata key 'a'");
}

TEST(GgufCorrupt, AlignmentZeroOrNotPowerOfTwo) {
  for (uint32_t a : {0u, 3u, 48u}) {
    RawBuilder b;
    b.header(0, 1).kv_u32("general.alignment", a);
    EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 16: general.alignment must be a uint32 power of two, got " +
                                        std::to_string(a));
  }
  RawBuilder s;
  s.header(0, 1).kv_str("general.alignment", "32");
  EXPECT_EQ(parse_error(s.bytes),
            "bad.gguf: offset 16: general.alignment must be a uint32 power of two, got \"32\"");
}

TEST(GgufCorrupt, DimensionCounts) {
  for (uint32_t n_dims : {0u, 5u, 0xFFFFFFFFu}) {
    RawBuilder b;
    b.header(1, 0).str("t").put<uint32_t>(n_dims).zeros(64);
    EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 33: tensor 't': " + std::to_string(n_dims) +
                                        " dimensions, expected 1 to 4");
  }
}

TEST(GgufCorrupt, ZeroAndNegativeDimensions) {
  RawBuilder b;
  b.header(1, 0).tensor("t", {4, 0}, 0, 0).zeros(64);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 45: tensor 't': dimension 1 is 0, expected 1 to 2^63-1");
  RawBuilder n;
  n.header(1, 0).tensor("t", {kHuge}, 0, 0).zeros(64);
  EXPECT_EQ(parse_error(n.bytes),
            "bad.gguf: offset 37: tensor 't': dimension 0 is 18446744073709551615, expected 1 to 2^63-1");
}

TEST(GgufCorrupt, ElementCountOverflow) {
  RawBuilder b;
  b.header(1, 0).tensor("t", {1ull << 32, 1ull << 32}, 0, 0).zeros(64);
  EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 45: tensor 't': element count overflows 64 bits");
  RawBuilder bytes_overflow;  // elements fit int64, bytes (x4 for F32) do not
  bytes_overflow.header(1, 0).tensor("t", {1ull << 31, 1ull << 31}, 0, 0).zeros(64);
  EXPECT_EQ(parse_error(bytes_overflow.bytes), "bad.gguf: offset 33: tensor 't': byte size overflows 64 bits");
}

TEST(GgufCorrupt, TensorTypeOutOfRangeOrRetired) {
  for (uint32_t type : {4u, 31u, 40u, 0xFFFFFFFFu}) {
    RawBuilder b;
    b.header(1, 0).tensor("t", {32}, type, 0).zeros(64);
    EXPECT_EQ(parse_error(b.bytes), "bad.gguf: offset 45: tensor 't': type " + std::to_string(type) +
                                        " is not a known GGML tensor type");
  }
}

TEST(GgufCorrupt, RowNotAMultipleOfTheBlockSize) {
  RawBuilder b;
  b.header(1, 0).tensor("t", {33, 2}, 2, 0).zeros(128);
  EXPECT_EQ(parse_error(b.bytes),
            "bad.gguf: offset 33: tensor 't': row length 33 is not a multiple of the Q4_0 block size 32");
}

TEST(GgufCorrupt, MisalignedTensorOffset) {
  RawBuilder b;
  b.header(1, 0).tensor("t", {4}, 0, 7).pad().zeros(64);
  EXPECT_EQ(parse_error(b.bytes),
            "bad.gguf: offset 49: tensor 't': data offset 7 is not a multiple of the alignment 32");
}

TEST(GgufCorrupt, TensorDataOutsideTheFile) {
  RawBuilder b;
  b.header(1, 0).tensor("t", {64}, 0, 0).pad().zeros(100);  // needs 256 bytes of data
  EXPECT_EQ(parse_error(b.bytes),
            "bad.gguf: offset 64: tensor 't': data [0, +256) extends past the end of the file (data section is 100 "
            "bytes); the file is truncated or the tensor info is corrupt");
  RawBuilder far;
  far.header(1, 0).tensor("t", {4}, 0, 1ull << 62).pad().zeros(16);
  EXPECT_EQ(parse_error(far.bytes),
            "bad.gguf: offset 80: tensor 't': data [4611686018427387904, +16) extends past the end of the file (data "
            "section is 16 bytes); the file is truncated or the tensor info is corrupt");
}

TEST(GgufCorrupt, TruncatedDataSection) {
  auto full = valid_file();
  auto ok = File::parse(full.data(), full.size(), "ok");
  ASSERT_TRUE(ok.ok());
  const TensorInfo& last = ok->tensors().back();
  full.resize(ok->data_offset() + last.offset + last.n_bytes - 10);  // the last tensor's final 10 bytes are cut
  const std::string err = parse_error(full);
  EXPECT_NE(err.find("tensor 'blk.0.attn_q.weight': data [96, +36) extends past the end of the file"),
            std::string::npos)
      << err;
}

TEST(GgufCorrupt, DuplicateAndOverlappingTensors) {
  RawBuilder dup;
  dup.header(2, 0).tensor("t", {4}, 0, 0).tensor("t", {4}, 0, 32).pad().zeros(64);
  EXPECT_EQ(parse_error(dup.bytes), "bad.gguf: offset 57: duplicate tensor 't'");
  RawBuilder overlap;
  overlap.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {4}, 0, 32).pad().zeros(64);
  EXPECT_EQ(parse_error(overlap.bytes), "bad.gguf: offset 128: tensor 'b' overlaps the data of tensor 'a'");
}

TEST(GgufCorrupt, PathIsADirectoryOrFifo) {
  auto dir = File::open("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().message, "/tmp: is a directory, expected a file");
  const std::string fifo = ::testing::TempDir() + "/kairo_fifo_test";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = File::open(fifo);
  ::unlink(fifo.c_str());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, fifo + ": is not a regular file (FIFO, socket or device), expected a file");
  auto missing = File::open("/nonexistent/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "/nonexistent/model.gguf: cannot open: No such file or directory");
}

// Every single-byte corruption of a valid file either parses or fails with a located error (no crash under ASan).
TEST(GgufCorrupt, EveryByteFlippedFailsCleanlyOrParses) {
  const auto full = valid_file();
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}}) {
      auto bytes = full;
      bytes[i] = v;
      auto f = File::parse(bytes.data(), bytes.size(), "bad.gguf");
      if (!f.ok()) {
        ASSERT_EQ(f.error().message.rfind("bad.gguf: offset ", 0), 0u) << f.error().message;
      }
    }
  }
}

}  // namespace
}  // namespace kairo::gguf
