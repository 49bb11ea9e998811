#include "grammar/utf8_ranges.h"

#include <gtest/gtest.h>

#include <random>

namespace kairo::grammar {
namespace {

bool sequence_matches(const Utf8Sequence& seq, const std::vector<uint8_t>& bytes) {
  if (seq.size() != bytes.size()) return false;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (bytes[i] < seq[i].lo || bytes[i] > seq[i].hi) return false;
  }
  return true;
}

// Every scalar value in the range is encoded by exactly one sequence, and no value outside it by any: checked over
// all code points for ranges that cross every length boundary and the surrogate gap.
TEST(Utf8Ranges, SequencesEncodeExactlyTheRange) {
  std::mt19937 rng(7);
  std::vector<CodepointRange> ranges = {{0, kMaxCodepoint}, {0x7F, 0x80}, {0x7FF, 0x800}, {0xD7FF, 0xE000},
                                        {0xFFFF, 0x10000}, {0x41, 0x5A}, {0x3A9, 0x3A9}};
  for (int i = 0; i < 8; ++i) {
    uint32_t a = std::uniform_int_distribution<uint32_t>(0, kMaxCodepoint)(rng);
    uint32_t b = std::uniform_int_distribution<uint32_t>(0, kMaxCodepoint)(rng);
    ranges.push_back({std::min(a, b), std::max(a, b)});
  }
  for (const auto& r : ranges) {
    const auto seqs = utf8_sequences(r);
    for (uint32_t cp = 0; cp <= kMaxCodepoint; cp += (cp < 0x20000 ? 1 : 61)) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const auto bytes = utf8_encode(cp);
      int hits = 0;
      for (const auto& s : seqs) hits += sequence_matches(s, bytes);
      const bool inside = cp >= r.lo && cp <= r.hi;
      ASSERT_EQ(hits, inside ? 1 : 0) << "range " << std::hex << r.lo << "-" << r.hi << " cp " << cp;
    }
    // No sequence admits an encoded surrogate (ED A0..BF ..).
    for (const auto& s : seqs) {
      if (s.size() == 3 && s[0].lo <= 0xED && s[0].hi >= 0xED) {
        EXPECT_TRUE(s[1].hi < 0xA0 || s[0].lo != 0xED || s[0].hi != 0xED) << std::hex << r.lo;
      }
    }
  }
}

}  // namespace
}  // namespace kairo::grammar
