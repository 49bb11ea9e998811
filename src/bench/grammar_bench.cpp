#include "bench/grammar_bench.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "grammar/byte_grammar.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/token_masker.h"
#include "grammar/token_trie.h"

namespace kairo::bench {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

std::string many_property_schema(int n) {
  nlohmann::ordered_json props = nlohmann::ordered_json::object();
  nlohmann::ordered_json required = nlohmann::ordered_json::array();
  for (int i = 0; i < n; ++i) {
    const std::string name = "field_" + std::to_string(i);
    nlohmann::ordered_json p;
    switch (i % 6) {
      case 0: p = {{"type", "string"}, {"maxLength", 24}}; break;
      case 1: p = {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000 + i}}; break;
      case 2: p = {{"enum", {"red", "green", "blue", i}}}; break;
      case 3: p = {{"type", "string"}, {"format", i % 12 == 3 ? "date" : "uuid"}}; break;
      case 4: p = {{"type", "array"}, {"items", {{"type", "number"}}}, {"maxItems", 5}}; break;
      default:
        p = {{"type", "object"},
             {"properties", {{"id", {{"type", "integer"}}}, {"ok", {{"type", "boolean"}}}}},
             {"required", {"id"}}};
    }
    props[name] = p;
    if (i % 2 == 0) required.push_back(name);
  }
  return nlohmann::ordered_json{{"type", "object"}, {"properties", props}, {"required", required},
                                {"additionalProperties", false}}
      .dump();
}

Result<GrammarBenchResult> run_grammar_bench(const GrammarBenchOptions& o) {
  GrammarBenchResult r;
  r.n_vocab = static_cast<int>(o.token_bytes.size());
  auto t0 = Clock::now();
  auto trie = std::make_shared<const grammar::TokenTrie>(o.token_bytes);
  r.trie_ms = us_since(t0) / 1000.0;

  t0 = Clock::now();
  std::string gbnf = grammar::json_object_gbnf();
  if (!o.schema.empty()) {
    KAIRO_TRY_ASSIGN(gbnf, grammar::json_schema_to_gbnf(std::string_view(o.schema)));
  }
  KAIRO_TRY_ASSIGN(grammar::ByteGrammar lowered, grammar::compile_gbnf(gbnf));
  auto arena = std::make_shared<grammar::StackArena>(std::move(lowered));
  r.compile_ms = us_since(t0) / 1000.0;

  grammar::TokenMasker masker(arena, trie, o.eog_ids);
  grammar::GrammarMatcher matcher(arena);
  std::vector<uint64_t> mask(masker.mask_words());
  t0 = Clock::now();
  masker.fill_mask(matcher, mask);
  r.first_mask_ms = us_since(t0) / 1000.0;

  std::mt19937_64 rng(o.seed);
  std::vector<double> mask_us, accept_us;
  std::vector<int32_t> allowed;
  for (int step = 0; step < o.n_steps; ++step) {
    t0 = Clock::now();
    masker.fill_mask(matcher, mask);
    mask_us.push_back(us_since(t0));
    allowed.clear();
    for (size_t w = 0; w < mask.size(); ++w)
      for (uint64_t bits = mask[w]; bits != 0; bits &= bits - 1)
        allowed.push_back(static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
    const bool is_eog_only = std::all_of(allowed.begin(), allowed.end(), [&](int32_t t) {
      return std::find(o.eog_ids.begin(), o.eog_ids.end(), t) != o.eog_ids.end();
    });
    if (allowed.empty() || is_eog_only || !matcher.can_continue()) {  // a complete text: start the next one
      ++r.n_documents;
      matcher.reset();
      continue;
    }
    int32_t token = allowed[rng() % allowed.size()];
    if (std::find(o.eog_ids.begin(), o.eog_ids.end(), token) != o.eog_ids.end()) {
      ++r.n_documents;
      matcher.reset();
      continue;
    }
    t0 = Clock::now();
    if (!masker.accept_token(matcher, token)) return Error{"an allowed token was refused by the matcher"};
    accept_us.push_back(us_since(t0));
  }
  r.n_steps = o.n_steps;
  double sum = 0;
  for (double v : mask_us) sum += v;
  r.mask_mean_us = sum / static_cast<double>(std::max<size_t>(1, mask_us.size()));
  r.mask_p50_us = percentile(mask_us, 0.5);
  r.mask_p99_us = percentile(mask_us, 0.99);
  r.mask_max_us = percentile(mask_us, 1.0);
  sum = 0;
  for (double v : accept_us) sum += v;
  r.accept_mean_us = sum / static_cast<double>(std::max<size_t>(1, accept_us.size()));
  r.stack_hits = masker.stats().stack_hits;
  r.truncated_walks = masker.stats().truncated_walks;
  r.resumed_walks = masker.stats().resumed_walks;
  r.walk_sets = masker.stats().walk_sets;
  return r;
}

}  // namespace kairo::bench
