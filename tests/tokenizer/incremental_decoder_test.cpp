// Streaming detokenization: only complete UTF-8 comes out; invalid bytes become U+FFFD as soon as they are known
// to be invalid, so a stream never stalls.
#include <gtest/gtest.h>

#include <random>

#include "tokenizer/utf8.h"
#include "tokenizer_test_util.h"

namespace kairo::tokenizer {
namespace {

// aidreams (SentencePiece, 512 tokens): <0xNN> is id 3 + NN.
const Tokenizer& tok() { return testing::shared_tokenizer("models/aidreams260K.gguf"); }
int32_t byte_id(uint8_t b) { return 3 + b; }
const std::string kFffd = "\xEF\xBF\xBD";

TEST(IncrementalDecoder, MultiByteCharacterSplitOverByteTokens) {
  IncrementalDecoder dec(tok());
  EXPECT_EQ(dec.push(byte_id(0xE2)), "");
  EXPECT_EQ(dec.n_pending_bytes(), 1u);
  EXPECT_EQ(dec.push(byte_id(0x82)), "");
  EXPECT_EQ(dec.push(byte_id(0xAC)), "\xE2\x82\xAC");  // €
  EXPECT_EQ(dec.n_pending_bytes(), 0u);
  // A 4-byte emoji, then a normal token in the same push as the completion.
  EXPECT_EQ(dec.push(byte_id(0xF0)), "");
  EXPECT_EQ(dec.push(byte_id(0x9F)), "");
  EXPECT_EQ(dec.push(byte_id(0xA6)), "");
  EXPECT_EQ(dec.push(byte_id(0x99)), "\xF0\x9F\xA6\x99");  // 🦙
  EXPECT_EQ(dec.push(262), " a");
  EXPECT_EQ(dec.flush(), "");
}

TEST(IncrementalDecoder, InvalidSequencesBecomeReplacementCharsWithoutStalling) {
  IncrementalDecoder dec(tok());
  EXPECT_EQ(dec.push(byte_id(0x80)), kFffd);           // stray continuation byte: invalid at once
  EXPECT_EQ(dec.push(byte_id(0xF5)), kFffd);           // never a lead byte
  EXPECT_EQ(dec.push(byte_id(0xE2)), "");              // could still become valid
  EXPECT_EQ(dec.push(byte_id(0x41)), kFffd + "A");     // now known invalid; 'A' is not swallowed
  EXPECT_EQ(dec.push(byte_id(0xE0)), "");
  EXPECT_EQ(dec.push(byte_id(0x80)), kFffd + kFffd);   // E0 80 is an overlong form: two invalid subparts
  EXPECT_EQ(dec.push(byte_id(0xED)), "");
  EXPECT_EQ(dec.push(byte_id(0xA0)), kFffd + kFffd);   // ED A0 would be a surrogate
  EXPECT_EQ(dec.push(byte_id(0xC3)), "");
  EXPECT_EQ(dec.flush(), kFffd);                       // the stream ended inside a character
  EXPECT_EQ(dec.n_pending_bytes(), 0u);
}

TEST(IncrementalDecoder, ControlTokensAndLeadingSpace) {
  IncrementalDecoder plain(tok());
  EXPECT_EQ(plain.push(1), "");  // <s>
  EXPECT_EQ(plain.push(303), tok().token_to_piece(303));
  IncrementalDecoder special(tok(), /*render_special=*/true);
  EXPECT_EQ(special.push(1), "<s>");
  IncrementalDecoder strip(tok(), false, /*strip_leading_space=*/true);
  EXPECT_EQ(strip.push(262), "a");   // "▁a" as the first token: the space prefix is dropped, as detokenize does
  EXPECT_EQ(strip.push(262), " a");  // only the first
}

TEST(IncrementalDecoder, RandomStreamsEqualTheSanitizedWholeDecode) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> any_id(0, tok().n_vocab() - 1);
  std::uniform_int_distribution<int32_t> any_byte(0, 255);
  for (int round = 0; round < 200; ++round) {
    std::vector<int32_t> ids;
    const int n = 1 + round % 40;
    for (int i = 0; i < n; ++i) ids.push_back(i % 3 == 0 ? any_id(rng) : byte_id(static_cast<uint8_t>(any_byte(rng))));
    IncrementalDecoder dec(tok());
    std::string streamed;
    for (int32_t id : ids) {
      const std::string chunk = dec.push(id);
      EXPECT_TRUE(is_valid_utf8(chunk));
      EXPECT_LE(dec.n_pending_bytes(), 3u);
      streamed += chunk;
    }
    streamed += dec.flush();
    std::string expected;
    append_utf8_sanitized(tok().decode(ids), expected);
    EXPECT_EQ(streamed, expected) << "round " << round;
  }
}

TEST(Utf8, StepClassification) {
  EXPECT_EQ(utf8_step("A").kind, Utf8Step::kValid);
  EXPECT_EQ(utf8_step("\xC3\xA9").n_bytes, 2u);
  EXPECT_EQ(utf8_step("\xC3").kind, Utf8Step::kIncomplete);
  EXPECT_EQ(utf8_step("\xC0\x80").kind, Utf8Step::kInvalid);          // overlong
  EXPECT_EQ(utf8_step("\xF4\x90\x80\x80").kind, Utf8Step::kInvalid);  // > U+10FFFF
  EXPECT_EQ(utf8_step("\xF0\x9F\xA6").kind, Utf8Step::kIncomplete);
  EXPECT_EQ(utf8_step("\xF0\x9F\x41").n_bytes, 2u);                   // maximal subpart F0 9F
  EXPECT_TRUE(is_valid_utf8("h\xC3\xA9llo \xF0\x9F\xA6\x99"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
}

}  // namespace
}  // namespace kairo::tokenizer
