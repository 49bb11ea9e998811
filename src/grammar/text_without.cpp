#include "grammar/text_without.h"

#include <map>
#include <set>

#include "core/format.h"
#include "grammar/gbnf_writer.h"

namespace kairo::grammar {
namespace {

// A string split into its UTF-8 characters (a broken byte stands alone).
std::vector<std::string> characters(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    n = std::min(n, s.size() - i);
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// A character inside a [...] class.
std::string class_member(const std::string& c) {
  if (c == "\n") return "\\n";
  if (c == "\r") return "\\r";
  if (c == "\t") return "\\t";
  if (c.size() == 1 && std::string_view("\\]^-[\"").find(c[0]) != std::string_view::npos) return "\\" + c;
  return c;
}

using Tail = std::vector<std::string>;  // a marker after its first character

// After the first character and tails' first `depth` characters: stop here, or any character that continues no
// tail (then anything up to the next first character), or one that continues some tail; a whole tail never.
std::string after_first(const std::string& first, const std::vector<const Tail*>& tails, size_t depth) {
  std::map<std::string, std::vector<const Tail*>> by_next;
  for (const Tail* t : tails) by_next[(*t)[depth]].push_back(t);
  std::string others = "[^" + class_member(first);
  for (const auto& [c, _] : by_next) others += class_member(c);
  const std::string rest = "[^" + class_member(first) + "]*";
  std::string alts = others + "] " + rest;
  for (const auto& [c, group] : by_next) {
    std::vector<const Tail*> longer;
    bool whole = false;  // a marker ends with this character: it may not follow
    for (const Tail* t : group) {
      if (t->size() == depth + 1) whole = true;
      else longer.push_back(t);
    }
    if (!whole) alts += " | " + GbnfWriter::literal(c) + " " + after_first(first, longer, depth + 1);
  }
  return "( " + alts + " )?";
}

}  // namespace

Result<std::string> text_without_gbnf(const std::vector<std::string_view>& markers) {
  if (markers.empty()) return Error{"text_without_gbnf: no markers"};
  std::vector<Tail> tails;
  std::string first;
  for (std::string_view m : markers) {
    std::vector<std::string> chars = characters(m);
    if (chars.size() < 2) return Error{"text_without_gbnf: a marker needs at least two characters"};
    if (first.empty()) first = chars[0];
    if (chars[0] != first) return Error{"text_without_gbnf: the markers must start with the same character"};
    tails.emplace_back(chars.begin() + 1, chars.end());
  }
  for (const Tail& t : tails) {
    for (const std::string& c : t) {
      if (c == first) {
        return Error{strprintf("text_without_gbnf: '%s' occurs inside a marker, not only first", first.c_str())};
      }
    }
  }
  std::vector<const Tail*> all;
  for (const Tail& t : tails) all.push_back(&t);
  return "[^" + class_member(first) + "]* ( " + GbnfWriter::literal(first) + " " + after_first(first, all, 0) + " )*";
}

}  // namespace kairo::grammar
