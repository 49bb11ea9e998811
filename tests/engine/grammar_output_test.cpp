// Constrained output through the engine on a random-weight model at temperature 1 (the grammar, not the model,
// decides validity): every output of the 37 schemas of tests/data/json-schemas/conformance.json x 10 seeds that
// finishes with "stop" validates under Python's jsonschema; choices and regexes hold; a grammar request next to
// unconstrained ones leaves their tokens unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "engine/engine.h"
#include "engine_test_support.h"
#include "grammar/byte_grammar.h"
#include "grammar/json_schema.h"
#include "grammar/stack_arena.h"

namespace kairo::engine {
namespace {

using ordered = nlohmann::ordered_json;

struct GrammarFixture {
  testing::LoadedModel loaded;
  std::unique_ptr<Engine> engine;
  tokenizer::Tokenizer* tokenizer = nullptr;
};

GrammarFixture& grammar_fixture() {
  static GrammarFixture f = [] {
    GrammarFixture out;
    out.loaded = testing::load_shared_model("synth-llama-gqa.Q8_0.gguf");
    out.tokenizer = out.loaded.tokenizer.get();
    EngineConfig cfg;
    cfg.scheduler.max_num_seqs = 64;
    cfg.max_model_len = 512;
    auto e = Engine::create(*out.loaded.model, *out.loaded.tokenizer, cfg);
    EXPECT_TRUE(e.ok()) << e.error().message;
    out.engine = std::move(e).value();
    return out;
  }();
  return f;
}

std::shared_ptr<grammar::StackArena> compile(const std::string& gbnf) {
  auto g = grammar::compile_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.error().message << "\n" << gbnf;
  return std::make_shared<grammar::StackArena>(std::move(*g));
}

using Output = testing::Finished;

std::vector<Output> run_grammar(const std::vector<Request>& reqs) {
  return testing::run_requests(*grammar_fixture().engine, reqs);
}

Request sampled(std::shared_ptr<grammar::StackArena> g, uint64_t seed, int max_tokens = 300) {
  Request r;
  r.prompt_tokens = grammar_fixture().tokenizer->encode("Once upon a time", true, false);
  r.sampling.temperature = 1.0f;
  r.sampling.seed = seed;
  r.stop.max_tokens = max_tokens;
  r.grammar = std::move(g);
  return r;
}

TEST(GrammarOutput, EveryConformanceSchemaValidatesIndependently) {
  std::ifstream in(std::string(KAIRO_SOURCE_DIR) + "/tests/data/json-schemas/conformance.json");
  const ordered cases = ordered::parse(in);
  ASSERT_GE(cases.size(), 30u);
  std::vector<Request> reqs;
  for (const auto& c : cases) {
    auto gbnf = grammar::json_schema_to_gbnf(c["schema"]);
    ASSERT_TRUE(gbnf.ok()) << gbnf.error().message;
    auto arena = compile(*gbnf);
    for (uint64_t seed = 0; seed < 10; ++seed) reqs.push_back(sampled(arena, seed));
  }
  const std::vector<Output> outs = run_grammar(reqs);
  ordered samples = ordered::array();
  int n_stopped = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    const ordered& c = cases[i / 10];
    EXPECT_TRUE(outs[i].error.empty()) << outs[i].error;
    if (outs[i].reason != FinishReason::Stop) continue;  // cut at max_tokens: a prefix, not a full text
    ++n_stopped;
    samples.push_back({{"name", c["name"]}, {"schema", c["schema"]}, {"text", outs[i].text}});
  }
  // Most finish: at temperature 1 a random model still closes its objects within 300 tokens.
  EXPECT_GE(n_stopped, static_cast<int>(outs.size()) * 8 / 10) << n_stopped << " of " << outs.size();
  const std::string path = std::string(KAIRO_BINARY_DIR) + "/engine_json_schema_outputs.json";
  std::ofstream(path) << samples.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(KAIRO_SOURCE_DIR) +
                          "/tests/grammar/validate_json_samples.py " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "some outputs do not validate: see the output above";
}

TEST(GrammarOutput, ChoicesAndRegexesHold) {
  auto choice = compile(R"(root ::= "yes" | "no" | "maybe later")");
  auto regex = compile(R"(root ::= [0-9] [0-9] [0-9] "-" [a-z]+ "!")");
  std::vector<Request> reqs;
  for (uint64_t seed = 0; seed < 10; ++seed) reqs.push_back(sampled(choice, seed));
  for (uint64_t seed = 0; seed < 10; ++seed) reqs.push_back(sampled(regex, seed, 40));
  const auto outs = run_grammar(reqs);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(outs[i].reason, FinishReason::Stop);
    EXPECT_TRUE(outs[i].text == "yes" || outs[i].text == "no" || outs[i].text == "maybe later") << outs[i].text;
  }
  for (int i = 10; i < 20; ++i) {
    if (outs[i].reason == FinishReason::Stop) {
      EXPECT_TRUE(std::regex_match(outs[i].text, std::regex("[0-9]{3}-[a-z]+!"))) << outs[i].text;
    } else {
      EXPECT_TRUE(std::regex_match(outs[i].text, std::regex("[0-9]{0,3}(-[a-z]*)?"))) << outs[i].text;
    }
  }
}

TEST(GrammarOutput, ConstrainedNeighboursLeaveGreedyOutputsUnchanged) {
  Request plain;
  plain.prompt_tokens = grammar_fixture().tokenizer->encode("The machine", true, false);
  plain.sampling.temperature = 0;
  plain.stop.max_tokens = 12;
  plain.stop.ignore_eos = true;
  const Output alone = run_grammar({plain})[0];
  auto json_object = compile(grammar::json_object_gbnf());
  std::vector<Request> reqs = {plain};
  for (uint64_t seed = 0; seed < 6; ++seed) reqs.push_back(sampled(json_object, seed, 60));
  const auto outs = run_grammar(reqs);
  EXPECT_EQ(outs[0].tokens, alone.tokens);
  for (size_t i = 1; i < outs.size(); ++i) {
    if (outs[i].reason == FinishReason::Stop) {
      EXPECT_TRUE(ordered::accept(outs[i].text)) << outs[i].text;
    }
  }
}


// A reasoning model's thinking stays free of the grammar (Request::grammar_after_thinking). Two tokens of this
// vocabulary stand in for <think> and </think>; logit biases steer the random model into and out of the block.
TEST(GrammarOutput, TheGrammarAppliesAfterTheThinkingBlockNotInIt) {
  const tokenizer::Tokenizer& tok = *grammar_fixture().tokenizer;
  const int32_t open = tok.find_token("Z"), close = tok.find_token("Q");
  ASSERT_GE(open, 0);
  ASSERT_GE(close, 0);
  auto choice = compile(R"(root ::= "yes" | "no")");
  auto answer_of = [&](const Output& o, size_t from) {
    return tok.detokenize(std::vector<int32_t>(o.tokens.begin() + static_cast<ptrdiff_t>(from), o.tokens.end()));
  };
  std::vector<Request> reqs;
  // 0: the prompt opened the block, and the closing token is favoured: closed at once, then the grammar holds.
  reqs.push_back(sampled(choice, 1, 40));
  reqs.back().grammar_after_thinking = {open, close, true};
  reqs.back().sampling.logit_bias = {{close, 30.0f}};
  // 1: the opening token is favoured (and then always): the block opens and stays open, unconstrained (the
  // grammar would allow neither token) and never ended by end-of-generation, until max_tokens.
  reqs.push_back(sampled(choice, 2, 12));
  reqs.back().grammar_after_thinking = {open, close, false};
  reqs.back().sampling.logit_bias = {{open, 30.0f}};
  for (int32_t eog : tok.eog_ids()) reqs.back().sampling.logit_bias.push_back({eog, 30.0f});
  // 2-5: the opening token banned: no thinking, the grammar from the first token.
  for (uint64_t seed = 0; seed < 4; ++seed) {
    reqs.push_back(sampled(choice, seed, 40));
    reqs.back().grammar_after_thinking = {open, close, false};
    reqs.back().sampling.logit_bias = {{open, -INFINITY}};
  }
  const std::vector<Output> outs = run_grammar(reqs);
  ASSERT_EQ(outs[0].reason, FinishReason::Stop) << outs[0].error;
  ASSERT_FALSE(outs[0].tokens.empty());
  EXPECT_EQ(outs[0].tokens[0], close);
  const std::string a0 = answer_of(outs[0], 1);
  EXPECT_TRUE(a0 == "yes" || a0 == "no") << a0;

  EXPECT_EQ(outs[1].reason, FinishReason::Length) << outs[1].error;
  ASSERT_EQ(outs[1].tokens.size(), 12u);
  EXPECT_EQ(outs[1].tokens[0], open);
  EXPECT_EQ(outs[1].tokens[1], open) << "inside the block the grammar does not apply";
  for (int32_t t : outs[1].tokens) EXPECT_FALSE(tok.is_eog(t)) << "end-of-generation inside the thinking block";

  for (size_t i = 2; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i].reason, FinishReason::Stop) << outs[i].error;
    EXPECT_TRUE(outs[i].text == "yes" || outs[i].text == "no") << outs[i].text;
  }
}

}  // namespace
}  // namespace kairo::engine
