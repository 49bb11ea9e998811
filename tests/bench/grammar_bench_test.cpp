// The grammar benchmark's walk: on a small vocabulary it times every step, completes texts of the schema and
// serves most masks from the cache; the generated many-property schema has what it says.
#include "bench/grammar_bench.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kairo::bench {
namespace {

std::vector<std::string> byte_vocab() {
  std::vector<std::string> v = {""};  // id 0: end of generation
  for (int b = 32; b < 127; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"{\"", "\":", "\",", "true", "false", "null", "12", "  ", "\n", "\"}"}) v.push_back(t);
  return v;
}

TEST(GrammarBench, WalksTheGrammarAndTimesEveryMask) {
  GrammarBenchOptions o;
  o.token_bytes = byte_vocab();
  o.eog_ids = {0};
  o.schema = R"({"type":"object","properties":{"a":{"type":"boolean"},"b":{"enum":["x","y"]}},"required":["a","b"]})";
  o.n_steps = 600;
  auto r = run_grammar_bench(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->n_vocab, static_cast<int>(o.token_bytes.size()));
  EXPECT_EQ(r->n_steps, 600);
  EXPECT_GT(r->n_documents, 5);  // short texts: the walk completes many
  EXPECT_GT(r->mask_mean_us, 0);
  EXPECT_LE(r->mask_p50_us, r->mask_p99_us);
  EXPECT_LE(r->mask_p99_us, r->mask_max_us);
  EXPECT_GT(r->stack_hits, 100u);  // repeated states are served whole from the cache
  EXPECT_GT(r->compile_ms, 0);
}

TEST(GrammarBench, ManyPropertySchemaHasThemAllAndCompiles) {
  const auto schema = nlohmann::json::parse(many_property_schema(50));
  EXPECT_EQ(schema["properties"].size(), 50u);
  EXPECT_EQ(schema["required"].size(), 25u);
  GrammarBenchOptions o;
  o.token_bytes = byte_vocab();
  o.eog_ids = {0};
  o.schema = schema.dump();
  o.n_steps = 50;
  auto r = run_grammar_bench(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
}

TEST(GrammarBench, AnUnsupportedSchemaIsAnError) {
  GrammarBenchOptions o;
  o.token_bytes = byte_vocab();
  o.schema = R"({"not": {}})";
  auto r = run_grammar_bench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'not' is not supported"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kairo::bench
