#pragma once
// GBNF for the decimal integers in a range (JSON Schema's minimum/maximum on integers): no leading zeros, no "-0",
// built digit position by digit position the way regex generators do it ("[3-9] | [1-9][0-9] | 1[0-4][0-9]" for
// 3..149).
#include <cstdint>
#include <optional>
#include <string>

namespace kairo::grammar {

// Unbounded sides stop at this many digits, as the plain integer rule does (JSON parsers that read numbers as
// doubles stay exact).
inline constexpr int kMaxIntegerDigits = 16;

// The integers n with lo <= n <= hi (an absent bound is open). lo <= hi when both are given.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace kairo::grammar
