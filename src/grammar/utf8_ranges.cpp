#include "grammar/utf8_ranges.h"

namespace kairo::grammar {

std::vector<uint8_t> utf8_encode(uint32_t cp) {
  if (cp < 0x80) return {static_cast<uint8_t>(cp)};
  if (cp < 0x800) return {static_cast<uint8_t>(0xC0 | (cp >> 6)), static_cast<uint8_t>(0x80 | (cp & 0x3F))};
  if (cp < 0x10000) {
    return {static_cast<uint8_t>(0xE0 | (cp >> 12)), static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)),
            static_cast<uint8_t>(0x80 | (cp & 0x3F))};
  }
  return {static_cast<uint8_t>(0xF0 | (cp >> 18)), static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F)),
          static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)), static_cast<uint8_t>(0x80 | (cp & 0x3F))};
}

namespace {

int encoded_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// [lo, hi] with the same encoded length: split until every continuation position below the first differing one
// spans its full 80-BF range, so the set is a plain product of byte ranges.
void split_same_length(uint32_t lo, uint32_t hi, std::vector<Utf8Sequence>& out) {
  const int n = encoded_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;  // the low i continuation bytes
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_same_length(lo, lo | m, out);
        split_same_length((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_same_length(lo, (hi & ~m) - 1, out);
        split_same_length(hi & ~m, hi, out);
        return;
      }
    }
  }
  const auto a = utf8_encode(lo);
  const auto b = utf8_encode(hi);
  Utf8Sequence seq;
  for (int i = 0; i < n; ++i) seq.push_back({a[i], b[i]});
  out.push_back(std::move(seq));
}

}  // namespace

std::vector<Utf8Sequence> utf8_sequences(CodepointRange range) {
  std::vector<Utf8Sequence> out;
  if (range.hi > kMaxCodepoint) range.hi = kMaxCodepoint;
  // Surrogates have no UTF-8 encoding: cut them out first.
  std::vector<CodepointRange> pieces;
  if (range.lo <= 0xDFFF && range.hi >= 0xD800) {
    if (range.lo < 0xD800) pieces.push_back({range.lo, 0xD7FF});
    if (range.hi > 0xDFFF) pieces.push_back({0xE000, range.hi});
  } else if (range.lo <= range.hi) {
    pieces.push_back(range);
  }
  static constexpr uint32_t kLengthEnds[] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  for (auto p : pieces) {
    uint32_t lo = p.lo;
    for (uint32_t end : kLengthEnds) {
      if (lo > p.hi) break;
      if (lo > end) continue;
      const uint32_t hi = p.hi < end ? p.hi : end;
      split_same_length(lo, hi, out);
      lo = hi + 1;
    }
  }
  return out;
}

}  // namespace kairo::grammar
