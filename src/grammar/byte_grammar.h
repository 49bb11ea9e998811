#pragma once
// The grammar the matcher runs: rules whose alternatives are sequences of byte sets and rule references, each
// sequence ended by kEnd, all laid out in one element array so a matcher position is a single index. Lowering
// from the AST turns literals and Unicode classes into byte sets (utf8_ranges.h), and groups and repetitions into
// helper rules (repetition as right recursion, which the matcher runs in constant stack depth).
//
// Lowering refuses, with the rule named: undefined rules, a missing root, and left recursion (a rule that can
// reach itself before consuming a byte), which a top-down matcher cannot run.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "grammar/grammar_ast.h"

namespace kairo::grammar {

using ByteSet = std::array<uint64_t, 4>;

inline bool byte_set_has(const ByteSet& s, uint8_t b) { return (s[b >> 6] >> (b & 63)) & 1; }

struct Element {
  enum class Kind : uint8_t { kBytes, kRule, kEnd };
  Kind kind = Kind::kEnd;
  uint32_t index = 0;  // kBytes: into byte_sets; kRule: into rules
};

struct ByteRule {
  std::string name;                       // user rules keep theirs; helpers are named after the rule they came from
  std::vector<uint32_t> alternative_starts;  // element index of each alternative's first element
};

struct ByteGrammar {
  std::vector<Element> elements;
  std::vector<ByteSet> byte_sets;
  std::vector<ByteRule> rules;
  uint32_t root = 0;

  const Element& at(uint32_t pos) const { return elements[pos]; }
};

Result<ByteGrammar> lower_grammar(const GrammarAst& ast, const std::string& root_rule = "root");

// parse_gbnf + lower_grammar.
Result<ByteGrammar> compile_gbnf(std::string_view text, const std::string& root_rule = "root");

}  // namespace kairo::grammar
