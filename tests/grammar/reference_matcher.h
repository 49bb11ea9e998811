#pragma once
// Independent oracles for the grammar engine's tests, working on the parsed AST over code points (no byte
// lowering, no stacks, no caches):
//  - reference_full_match: does the whole input match the root rule? A memoized set-of-end-positions
//    recognizer, the textbook construction.
//  - sample_from_grammar: random strings the grammar generates (random derivations), for positive cases.
#include <optional>
#include <random>
#include <string>

#include "grammar/grammar_ast.h"

namespace kairo::grammar::testing {

bool reference_full_match(const GrammarAst& ast, const std::string& input, const std::string& root = "root");

// A random derivation of `root`, as UTF-8; nullopt when it grew past max_bytes (try again).
std::optional<std::string> sample_from_grammar(const GrammarAst& ast, std::mt19937& rng, size_t max_bytes = 200,
                                               const std::string& root = "root");

std::string encode_utf8(const std::u32string& s);

}  // namespace kairo::grammar::testing
