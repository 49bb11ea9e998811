#pragma once
// UTF-8 helpers shared by the tokenizers and the incremental decoder. Nothing here assumes valid input: every
// function is total over arbitrary bytes, because model output and user text both can be broken UTF-8.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kairo::tokenizer {

// Length of the sequence a lead byte announces, the way SentencePiece/llama.cpp split text into symbols:
// continuation and invalid lead bytes count as 1. Callers clip it to the bytes that remain.
inline size_t utf8_len_from_lead(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Result of looking at the UTF-8 sequence that starts at some position.
struct Utf8Step {
  enum Kind { kValid, kInvalid, kIncomplete } kind;
  size_t n_bytes;  // kValid: bytes of the code point; kInvalid: bytes to replace by one U+FFFD; kIncomplete: bytes seen
};

// Classifies the sequence at s[0..]: a complete valid code point, an invalid maximal subpart (replaced by one U+FFFD,
// as the Unicode standard recommends), or a valid prefix that needs more bytes. `s` must be non-empty.
Utf8Step utf8_step(std::string_view s);

// Appends `s` to `out`, replacing each invalid maximal subpart (and a truncated tail) by U+FFFD.
void append_utf8_sanitized(std::string_view s, std::string& out);

bool is_valid_utf8(std::string_view s);

// Appends the UTF-8 encoding of a code point (<= 0x10FFFF).
void append_utf8(uint32_t cpt, std::string& out);

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

}  // namespace kairo::tokenizer
