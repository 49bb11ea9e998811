// Speculative decoding inside the continuous batch: whatever the proposals, alone or batched, under preemption,
// with the prefix cache, stop tokens and max_tokens, a greedy request's tokens equal those of plain decoding, and a
// seeded sampled one's too (every emitted token is sampled from the same logits as without speculation); the KV
// of rejected proposals is given back.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/engine.h"
#include "engine_test_support.h"

namespace kairo::engine {
namespace {

testing::LoadedModel& synth_gqa_model() {
  static testing::LoadedModel m = testing::load_shared_model("synth-llama-gqa.Q8_0.gguf");
  return m;
}

// Prompts of 1 to ~400 tokens; half of them repeat a phrase, so the n-gram proposer finds something to propose.
std::vector<Request> repeating_requests(int n, int max_tokens) {
  return testing::mixed_requests(n, max_tokens, 99, true);
}

std::unique_ptr<Engine> make_spec_engine(EngineConfig cfg) {
  auto e = Engine::create(*synth_gqa_model().model, *synth_gqa_model().tokenizer, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return std::move(e).value();
}

std::vector<std::vector<int32_t>> tokens_of(const std::vector<testing::Finished>& out) {
  std::vector<std::vector<int32_t>> t;
  for (const auto& f : out) t.push_back(f.tokens);
  return t;
}

// Each request alone, no speculation, no prefix cache: the reference.
std::vector<std::vector<int32_t>> plain_outputs(const std::vector<Request>& reqs, bool exact = false) {
  EngineConfig cfg;
  cfg.enable_prefix_caching = false;
  cfg.exact_numerics = exact;
  auto engine = make_spec_engine(cfg);
  std::vector<std::vector<int32_t>> out;
  for (const Request& r : reqs) out.push_back(testing::run_requests(*engine, {r})[0].tokens);
  return out;
}

const std::vector<Request>& spec_requests32() {
  static const std::vector<Request> reqs = repeating_requests(32, 20);
  return reqs;
}

const std::vector<std::vector<int32_t>>& spec_reference32() {
  static const auto out = plain_outputs(spec_requests32());
  return out;
}

// Knows the reference continuations and proposes k tokens of which a varying number are right (0..k, by the
// request's length): every acceptance length and every rollback happen, at every offset in a block.
class PartlyRightProposer final : public Proposer {
 public:
  PartlyRightProposer(const std::vector<Request>& reqs, const std::vector<std::vector<int32_t>>& outputs, int n_vocab,
                      bool always_right = false)
      : n_vocab_(n_vocab), always_right_(always_right) {
    for (size_t i = 0; i < reqs.size(); ++i) continuations_[reqs[i].prompt_tokens] = outputs[i];
  }
  void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) override {
    out.clear();
    const auto it = continuations_.find(std::vector<int32_t>(tokens.begin(), tokens.begin() + n_prompt));
    if (it == continuations_.end()) return;
    const size_t done = tokens.size() - static_cast<size_t>(n_prompt);
    const int n_right = always_right_ ? k : static_cast<int>((tokens.size() * 7 + 3) % static_cast<size_t>(k + 1));
    for (int i = 0; i < k; ++i) {
      const size_t at = done + static_cast<size_t>(i);
      const int32_t right = at < it->second.size() ? it->second[at] : 0;
      out.push_back(i < n_right ? right : (right + 1) % n_vocab_);
    }
  }

 private:
  int n_vocab_;
  bool always_right_;
  std::map<std::vector<int32_t>, std::vector<int32_t>> continuations_;
};

EngineConfig speculating(const std::vector<Request>& reqs, const std::vector<std::vector<int32_t>>& outputs) {
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::Custom;
  cfg.speculative.custom =
      std::make_shared<PartlyRightProposer>(reqs, outputs, synth_gqa_model().model->config().n_vocab);
  cfg.speculative.num_tokens = 5;
  cfg.speculative.adaptive = false;  // speculate in every step, whatever it costs
  return cfg;
}

TEST(SpeculativeDecoding, BatchedGreedyOutputsEqualPlainDecodingAndRejectedKvIsFreed) {
  auto engine = make_spec_engine(speculating(spec_requests32(), spec_reference32()));
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
  const EngineStats s = engine->stats();
  EXPECT_GT(s.spec_num_accepted_tokens, 0);
  EXPECT_GT(s.spec_num_draft_tokens, s.spec_num_accepted_tokens);  // rejections happened too
  ASSERT_EQ(s.spec_num_accepted_tokens_per_pos.size(), 5u);
  EXPECT_GT(s.spec_num_accepted_tokens_per_pos[4], 0);  // some proposals were accepted whole
  for (size_t i = 1; i < 5; ++i)
    EXPECT_LE(s.spec_num_accepted_tokens_per_pos[i], s.spec_num_accepted_tokens_per_pos[i - 1]);
  EXPECT_EQ(s.kv_usage, 0.0);
  // Every token came out once: speculation emits several per step, never one twice.
  EXPECT_EQ(s.generation_tokens, 32 * 20);
}

TEST(SpeculativeDecoding, AloneGreedyOutputsEqualPlainDecoding) {
  auto engine = make_spec_engine(speculating(spec_requests32(), spec_reference32()));
  for (size_t i : {0u, 5u, 9u, 11u, 30u})
    EXPECT_EQ(testing::run_requests(*engine, {spec_requests32()[i]})[0].tokens, spec_reference32()[i])
        << "request " << i;
  EXPECT_GT(engine->stats().spec_num_accepted_tokens, 0);
}

TEST(SpeculativeDecoding, PreemptionUnderATinyKvPoolKeepsOutputsAndFreesEverything) {
  EngineConfig cfg = speculating(spec_requests32(), spec_reference32());
  cfg.n_kv_blocks = 40;  // 640 token slots for 32 requests of up to ~420 tokens
  auto engine = make_spec_engine(cfg);
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
  const EngineStats s = engine->stats();
  EXPECT_GT(s.n_preemptions, 0);
  EXPECT_GT(s.spec_num_accepted_tokens, 0);
  EXPECT_EQ(s.kv_usage, 0.0);
}

TEST(SpeculativeDecoding, BlocksCachedWhileSpeculatingServeLaterRequestsCorrectly) {
  // The blocks published while speculating (prompts, and outputs made of accepted proposals and corrections) serve
  // the same prompts again and conversations continued from the outputs: they hold the committed tokens' KV. (That
  // a block holding a proposal is never published is the KV manager's test, KVLookahead.)
  auto engine = make_spec_engine(speculating(spec_requests32(), spec_reference32()));
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
  std::vector<Request> resent;
  for (size_t i = 0; i < spec_requests32().size(); i += 3) {
    Request r = spec_requests32()[i];
    r.prompt_tokens.insert(r.prompt_tokens.end(), spec_reference32()[i].begin(), spec_reference32()[i].end());
    r.stop.max_tokens = 8;
    resent.push_back(r);
  }
  const auto want = plain_outputs(resent);
  auto fresh = testing::run_requests(*engine, resent);
  EXPECT_EQ(tokens_of(fresh), want);
  EXPECT_GT(engine->stats().prefix_cache_hits, 0);
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
}

TEST(SpeculativeDecoding, NgramProposalsKeepGreedyOutputs) {
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::Ngram;
  cfg.speculative.ngram = {1, 3};
  cfg.speculative.adaptive = false;
  auto engine = make_spec_engine(cfg);
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
  const EngineStats s = engine->stats();
  EXPECT_GT(s.spec_num_drafts, 0);
  EXPECT_EQ(s.kv_usage, 0.0);
}

TEST(SpeculativeDecoding, AStopTokenInsideAnAcceptedProposalEndsTheRequestThere) {
  std::vector<Request> reqs;
  std::vector<std::vector<int32_t>> want;
  for (size_t i = 0; i < 12; ++i) {
    Request r = spec_requests32()[i];
    const auto& ref = spec_reference32()[i];
    r.stop.stop_token_ids = {ref[7]};
    reqs.push_back(r);
    want.emplace_back(ref.begin(), std::find(ref.begin(), ref.end(), ref[7]) + 1);
  }
  // Proposals that are always right: the stop token arrives in the middle of an accepted run.
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::Custom;
  cfg.speculative.custom = std::make_shared<PartlyRightProposer>(
      reqs, spec_reference32(), synth_gqa_model().model->config().n_vocab, /*always_right=*/true);
  cfg.speculative.num_tokens = 4;
  cfg.speculative.adaptive = false;
  auto engine = make_spec_engine(cfg);
  const auto got = testing::run_requests(*engine, reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i]) << "request " << i;
    EXPECT_EQ(got[i].reason, FinishReason::Stop);
  }
  EXPECT_EQ(engine->stats().kv_usage, 0.0);
}

TEST(SpeculativeDecoding, SeededSampledRequestsSampleTheSameTokens) {
  std::vector<Request> reqs = repeating_requests(12, 16);
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].sampling.temperature = 0.9f;
    reqs[i].sampling.top_k = 40;
    reqs[i].sampling.seed = 1000 + i;
    reqs[i].sampling.repetition_penalty = 1.1f;
  }
  // Batch-invariant numerics for sampled requests too, so the logits are the same bits in both runs.
  const auto want = plain_outputs(reqs, /*exact=*/true);
  EngineConfig cfg = speculating(reqs, want);
  cfg.exact_numerics = true;
  auto engine = make_spec_engine(cfg);
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, reqs)), want);
  EXPECT_GT(engine->stats().spec_num_accepted_tokens, 0);
}

TEST(SpeculativeDecoding, LargeBatchesAndOptedOutRequestsDoNotSpeculate) {
  EngineConfig cfg = speculating(spec_requests32(), spec_reference32());
  cfg.speculative.max_batch = 1;  // one running request is already "large"
  auto engine = make_spec_engine(cfg);
  EXPECT_EQ(tokens_of(testing::run_requests(*engine, spec_requests32())), spec_reference32());
  EXPECT_EQ(engine->stats().spec_num_drafts, 0);

  auto engine2 = make_spec_engine(speculating(spec_requests32(), spec_reference32()));
  std::vector<Request> opted_out = spec_requests32();
  for (Request& r : opted_out) r.speculative = false;
  EXPECT_EQ(tokens_of(testing::run_requests(*engine2, opted_out)), spec_reference32());
  EXPECT_EQ(engine2->stats().spec_num_drafts, 0);
}

// Other families' forward passes under speculation: gemma3's sliding-window layers (window 8, on their own block
// pool, with blocks of 4 so that rollbacks cross window blocks) and qwen3moe's experts (the verifying tokens of one
// request route to different experts).
TEST(SpeculativeDecoding, SlidingWindowAndExpertModelsKeepGreedyOutputs) {
  for (const char* file : {"synth-gemma3.Q8_0.gguf", "synth-qwen3moe.Q8_0.gguf"}) {
    SCOPED_TRACE(file);
    testing::LoadedModel m = testing::load_shared_model(file);
    ASSERT_TRUE(m.model && m.tokenizer);
    const std::vector<Request> reqs = repeating_requests(12, 24);  // prompts of 1 to 400 tokens: 50 windows
    EngineConfig plain_cfg;
    plain_cfg.block_size = 4;
    plain_cfg.max_model_len = 512;
    plain_cfg.enable_prefix_caching = false;
    std::vector<std::vector<int32_t>> want;
    {
      auto plain = Engine::create(*m.model, *m.tokenizer, plain_cfg);
      ASSERT_TRUE(plain.ok()) << plain.error().message;
      for (const Request& r : reqs) want.push_back(testing::run_requests(**plain, {r})[0].tokens);
    }
    EngineConfig cfg = plain_cfg;
    cfg.enable_prefix_caching = true;
    cfg.speculative.method = SpeculativeMethod::Custom;
    cfg.speculative.custom = std::make_shared<PartlyRightProposer>(reqs, want, m.model->config().n_vocab);
    cfg.speculative.num_tokens = 5;
    cfg.speculative.adaptive = false;
    auto engine = Engine::create(*m.model, *m.tokenizer, cfg);
    ASSERT_TRUE(engine.ok()) << engine.error().message;
    EXPECT_EQ(tokens_of(testing::run_requests(**engine, reqs)), want);
    const EngineStats s = (*engine)->stats();
    EXPECT_GT(s.spec_num_accepted_tokens, 0);
    EXPECT_GT(s.spec_num_draft_tokens, s.spec_num_accepted_tokens);
    EXPECT_EQ(s.kv_usage, 0.0);
    EXPECT_EQ(s.n_window_kv_blocks_used, 0);
  }
}

TEST(SpeculativeDecoding, RefusesBadSettings) {
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::Ngram;
  cfg.speculative.num_tokens = 0;
  EXPECT_FALSE(Engine::create(*synth_gqa_model().model, *synth_gqa_model().tokenizer, cfg).ok());
  cfg.speculative.num_tokens = 4;
  cfg.speculative.ngram = {3, 2};
  EXPECT_FALSE(Engine::create(*synth_gqa_model().model, *synth_gqa_model().tokenizer, cfg).ok());
  cfg.speculative.method = SpeculativeMethod::Custom;
  cfg.speculative.ngram = {1, 2};
  const auto r = Engine::create(*synth_gqa_model().model, *synth_gqa_model().tokenizer, cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("proposer"), std::string::npos);
}

}  // namespace
}  // namespace kairo::engine
