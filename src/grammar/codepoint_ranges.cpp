#include "grammar/codepoint_ranges.h"

#include <algorithm>

namespace kairo::grammar {

std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

std::vector<CodepointRange> complement_ranges(const std::vector<CodepointRange>& ranges) {
  std::vector<CodepointRange> complement;
  uint32_t next = 0;
  for (const auto& r : ranges) {
    if (r.lo > next) complement.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) complement.push_back({next, kMaxCodepoint});
  return complement;
}

std::vector<CodepointRange> subtract_ranges(const std::vector<CodepointRange>& ranges,
                                            const std::vector<CodepointRange>& remove) {
  // A \ B = A ∩ complement(B), intersected range by range (both lists are sorted).
  const auto keep = complement_ranges(remove);
  std::vector<CodepointRange> out;
  size_t j = 0;
  for (const auto& a : ranges) {
    while (j < keep.size() && keep[j].hi < a.lo) ++j;
    for (size_t k = j; k < keep.size() && keep[k].lo <= a.hi; ++k) {
      out.push_back({std::max(a.lo, keep[k].lo), std::min(a.hi, keep[k].hi)});
    }
  }
  return out;
}

}  // namespace kairo::grammar
