#pragma once
// A GBNF grammar as written: rules of alternatives of sequences, over Unicode code points. The parser
// (gbnf_parser.h) produces it; lowering (byte_grammar.h) turns it into the byte-level form the matcher runs.
#include <cstdint>
#include <string>
#include <vector>

namespace kairo::grammar {

struct CodepointRange {
  uint32_t lo = 0;
  uint32_t hi = 0;  // inclusive
};

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;
inline constexpr uint32_t kUnboundedRepeat = UINT32_MAX;

struct AstNode;
using AstSequence = std::vector<AstNode>;
using AstAlternatives = std::vector<AstSequence>;

struct AstNode {
  enum class Kind { kLiteral, kCharClass, kRuleRef, kGroup, kRepeat };
  Kind kind = Kind::kLiteral;
  std::u32string literal;              // kLiteral: the code points, in order
  std::vector<CodepointRange> ranges;  // kCharClass: sorted, disjoint, negation already applied
  std::string rule;                    // kRuleRef: the referenced name
  AstAlternatives alternatives;        // kGroup: the alternatives; kRepeat: one sequence holding the repeated item
  uint32_t min = 0;                    // kRepeat
  uint32_t max = 0;                    // kRepeat (kUnboundedRepeat for * and +)
  int line = 0;                        // where it was written (for errors)
};

struct AstRule {
  std::string name;
  AstAlternatives alternatives;
  int line = 0;
};

struct GrammarAst {
  std::vector<AstRule> rules;  // in the order written; names are unique
  const AstRule* find(const std::string& name) const {
    for (const auto& r : rules) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }
};

}  // namespace kairo::grammar
