#pragma once
// Sets of code points as sorted, disjoint, inclusive ranges (character classes of GBNF and regular expressions).
#include <vector>

#include "grammar/grammar_ast.h"

namespace kairo::grammar {

// Sorted and merged (overlapping or adjacent ranges become one).
std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges);
// Every code point not in `ranges` (which must be normalized), up to U+10FFFF.
std::vector<CodepointRange> complement_ranges(const std::vector<CodepointRange>& ranges);
// The code points in `ranges` that are not in `remove` (both normalized).
std::vector<CodepointRange> subtract_ranges(const std::vector<CodepointRange>& ranges,
                                            const std::vector<CodepointRange>& remove);

}  // namespace kairo::grammar
