#include "grammar/integer_range.h"

#include <cassert>
#include <vector>

namespace kairo::grammar {

namespace {

std::string digit_class(char lo, char hi) {
  if (lo == hi) return std::string("\"") + lo + "\"";
  return std::string("[") + lo + "-" + hi + "]";
}

std::string any_digits(size_t n) {
  if (n == 0) return "";
  return n == 1 ? "[0-9]" : "[0-9]{" + std::to_string(n) + "}";
}

std::string join_alternatives(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

// The digit strings d with a <= d <= b, all three of the same length.
std::string same_length_range(const std::string& a, const std::string& b) {
  assert(a.size() == b.size() && a <= b);
  const size_t n = a.size();
  if (n == 0) return "";
  if (a == b) return "\"" + a + "\"";
  const std::string ra = a.substr(1), rb = b.substr(1);
  auto cat = [](const std::string& head, const std::string& tail) { return tail.empty() ? head : head + " " + tail; };
  if (a[0] == b[0]) return cat(digit_class(a[0], a[0]), same_length_range(ra, rb));
  const std::string zeros(n - 1, '0'), nines(n - 1, '9');
  if (ra == zeros && rb == nines) return cat(digit_class(a[0], b[0]), any_digits(n - 1));
  std::vector<std::string> alts;
  char lo_full = a[0], hi_full = b[0];
  if (ra == zeros) {
    // a[0] with any tail is a full block
  } else {
    alts.push_back(cat(digit_class(a[0], a[0]), same_length_range(ra, nines)));
    ++lo_full;
  }
  const bool b_full = rb == nines;
  if (!b_full) --hi_full;
  if (lo_full <= hi_full) alts.push_back(cat(digit_class(lo_full, hi_full), any_digits(n - 1)));
  if (!b_full) alts.push_back(cat(digit_class(b[0], b[0]), same_length_range(zeros, rb)));
  return join_alternatives(alts);
}

// Non-negative integers a <= n <= b; b absent: up to kMaxIntegerDigits digits (or a's length, if longer).
std::string nonnegative_range(uint64_t a, std::optional<uint64_t> b) {
  const std::string as = std::to_string(a);
  const std::string bs = b ? std::to_string(*b) : std::string(std::max<size_t>(as.size(), kMaxIntegerDigits), '9');
  std::vector<std::string> alts;
  for (size_t len = as.size(); len <= bs.size(); ++len) {
    const std::string lo = len == as.size() ? as : "1" + std::string(len - 1, '0');
    const std::string hi = len == bs.size() ? bs : std::string(len, '9');
    if (lo <= hi) alts.push_back(same_length_range(lo, hi));
  }
  return join_alternatives(alts);
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alts;
  // Negative part: "-" then the magnitudes max(1, -hi) .. -lo.
  if (!lo || *lo < 0) {
    const uint64_t mag_lo = hi && *hi < 0 ? static_cast<uint64_t>(-(*hi + 1)) + 1 : 1;
    std::optional<uint64_t> mag_hi;
    if (lo) mag_hi = static_cast<uint64_t>(-(*lo + 1)) + 1;
    alts.push_back("\"-\" " + nonnegative_range(mag_lo, mag_hi));
  }
  if (!hi || *hi >= 0) {
    const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    std::optional<uint64_t> to;
    if (hi) to = static_cast<uint64_t>(*hi);
    alts.push_back(nonnegative_range(from, to));
  }
  return join_alternatives(alts);
}

}  // namespace kairo::grammar
