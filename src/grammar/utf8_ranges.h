#pragma once
// A code-point range as the byte-range sequences that encode exactly its UTF-8 (surrogates excluded), the way
// regex engines compile Unicode classes to byte automata: [U+0080, U+07FF] -> [C2-DF][80-BF], and so on.
#include <cstdint>
#include <vector>

#include "grammar/grammar_ast.h"

namespace kairo::grammar {

struct ByteRange {
  uint8_t lo = 0;
  uint8_t hi = 0;  // inclusive
};

using Utf8Sequence = std::vector<ByteRange>;  // 1 to 4 byte ranges, one per encoded byte

std::vector<Utf8Sequence> utf8_sequences(CodepointRange range);

// The UTF-8 bytes of one scalar value (1 to 4).
std::vector<uint8_t> utf8_encode(uint32_t cp);

}  // namespace kairo::grammar
