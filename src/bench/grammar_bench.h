#pragma once
// `kairo bench grammar`: what constrained output costs per decode step, on one core. A grammar (any JSON object, or
// a schema) drives a random walk over a real vocabulary: each step fills the allowed-token mask (timed), picks a
// random allowed token and feeds it to the matcher, as the engine does after sampling. Also timed: compiling a
// schema (JSON Schema -> GBNF -> byte grammar -> first mask).
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace kairo::bench {

struct GrammarBenchOptions {
  std::vector<std::string> token_bytes;  // the vocabulary: what each token adds to the text ("" = never allowed)
  std::vector<int32_t> eog_ids;
  std::string schema;                    // JSON Schema text; empty: any JSON object
  int n_steps = 2000;                    // masks to time (documents restart when one completes)
  uint64_t seed = 1;
};

struct GrammarBenchResult {
  int n_vocab = 0;
  int n_steps = 0;
  int n_documents = 0;                  // completed texts
  double mask_mean_us = 0, mask_p50_us = 0, mask_p99_us = 0, mask_max_us = 0;
  double accept_mean_us = 0;            // feeding the chosen token to the matcher
  double compile_ms = 0;                // schema -> GBNF -> byte grammar -> matcher arena
  double first_mask_ms = 0;             // the first mask of a new grammar (walks the whole trie)
  double trie_ms = 0;                   // building the vocabulary's trie (once per tokenizer)
  uint64_t stack_hits = 0, truncated_walks = 0, resumed_walks = 0, walk_sets = 0;
};

Result<GrammarBenchResult> run_grammar_bench(const GrammarBenchOptions& options);

// A schema of n properties of mixed types (strings with formats and bounds, integers with ranges, enums, nested
// objects, arrays): the "50-property schema" of the compile-time target.
std::string many_property_schema(int n_properties);

}  // namespace kairo::bench
