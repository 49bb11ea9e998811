// The draft-model proposer: its guesses are the draft's greedy continuation of the request's tokens, after any
// divergence (rejected guesses) its KV rolls back to the common prefix, and release frees it. In the engine, a draft
// that is the model itself has every guess accepted; another model's guesses are mostly rejected; the model's own
// weights in Q4_0 have some guesses accepted and some rejected; either way greedy outputs equal plain decoding, alone,
// batched and under preemption, and every block of both pools comes back.
#include "engine/draft_model_proposer.h"

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/generator.h"
#include "engine_test_support.h"

namespace kairo::engine {
namespace {

testing::LoadedModel& target() {
  static testing::LoadedModel m = testing::load_shared_model("synth-llama-gqa.Q8_0.gguf");
  return m;
}

// The model's own weights quantized to Q4_0: a draft that is right often, and wrong often enough.
testing::LoadedModel& q4_draft() {
  static testing::LoadedModel m = testing::load_shared_model("synth-llama-gqa.Q4_0.gguf");
  return m;
}

// Another family with the same tokenizer: a draft whose guesses are often wrong.
testing::LoadedModel& other_draft() {
  static testing::LoadedModel m = testing::load_shared_model("synth-qwen2.Q8_0.gguf");
  return m;
}

std::vector<int32_t> greedy(model::Model& m, const std::vector<int32_t>& prompt, int n) {
  ThreadPool pool(2);
  GenerateOptions opts;
  opts.max_tokens = n;
  opts.sampling.temperature = 0;
  auto r = generate(m, prompt, opts, pool);
  EXPECT_TRUE(r.ok());
  return r.ok() ? r->tokens : std::vector<int32_t>{};
}

std::unique_ptr<DraftModelProposer> make_proposer(model::Model& draft, ThreadPool& pool, int64_t n_blocks = 64) {
  auto storage = model::KvStorage::create(draft.shared_device(), draft.config(), n_blocks + 1, 16, DType::F16);
  EXPECT_TRUE(storage.ok());
  return std::make_unique<DraftModelProposer>(draft, std::move(storage).value(), pool);
}

TEST(DraftModelProposer, GuessesTheDraftsGreedyContinuationAndRollsBackOnDivergence) {
  model::Model& m = *target().model;
  ThreadPool pool(2);
  auto proposer = make_proposer(m, pool);
  const std::vector<Request> reqs = testing::mixed_requests(4, 1);
  std::vector<std::vector<int32_t>> outs(reqs.size());
  std::vector<ProposalSlot> slots;
  for (size_t i = 0; i < reqs.size(); ++i) slots.push_back({i + 1, reqs[i].prompt_tokens, 0, 5, &outs[i]});
  proposer->propose_all(slots);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(outs[i], greedy(m, reqs[i].prompt_tokens, 5)) << "request " << i;

  // Request 3 accepted one guess and then sampled something else: the draft's KV of the other guesses goes back.
  std::vector<int32_t> diverged = reqs[3].prompt_tokens;
  diverged.push_back(outs[3][0]);
  diverged.push_back((outs[3][1] + 1) % m.config().n_vocab);
  std::vector<int32_t> again;
  const ProposalSlot slot{4, diverged, 0, 4, &again};
  proposer->propose_all(std::span(&slot, 1));
  EXPECT_EQ(again, greedy(m, diverged, 4));

  // A request that grew by many tokens the draft never saw catches up in the same call.
  std::vector<int32_t> longer = diverged;
  for (int t = 0; t < 40; ++t) longer.push_back(3 + (t * 37) % 400);
  const ProposalSlot slot2{4, longer, 0, 3, &again};
  proposer->propose_all(std::span(&slot2, 1));
  EXPECT_EQ(again, greedy(m, longer, 3));

  EXPECT_GT(proposer->kv_usage(), 0.0);
  for (uint64_t id = 1; id <= reqs.size(); ++id) proposer->release(id);
  EXPECT_EQ(proposer->kv_usage(), 0.0);
}

TEST(DraftModelProposer, AFullDraftPoolProposesNothingInsteadOfFailing) {
  model::Model& m = *target().model;
  ThreadPool pool(2);
  auto proposer = make_proposer(m, pool, /*n_blocks=*/2);  // 32 token slots
  std::vector<int32_t> prompt(40, 7), out;
  const ProposalSlot slot{1, prompt, 0, 4, &out};
  proposer->propose_all(std::span(&slot, 1));
  EXPECT_TRUE(out.empty());
  proposer->propose(std::vector<int32_t>{1, 5, 9}, 0, 3, out);  // a small one still fits
  EXPECT_EQ(out, greedy(m, {1, 5, 9}, 3));
}

struct EngineRun {
  std::vector<std::vector<int32_t>> tokens;
  EngineStats stats;
};

EngineRun run_with_draft(model::Model* draft, const std::vector<Request>& reqs, int64_t n_kv_blocks = 0) {
  EngineConfig cfg;
  cfg.n_kv_blocks = n_kv_blocks;
  if (draft) {
    cfg.speculative.method = SpeculativeMethod::DraftModel;
    cfg.speculative.draft_model = draft;
    cfg.speculative.adaptive = false;
  }
  auto engine = Engine::create(*target().model, *target().tokenizer, cfg);
  EXPECT_TRUE(engine.ok()) << engine.error().message;
  EngineRun r;
  for (const auto& f : testing::run_requests(**engine, reqs)) r.tokens.push_back(f.tokens);
  r.stats = (*engine)->stats();
  return r;
}

// 32 requests with prompts of 1 to ~400 tokens, and their plain greedy outputs (batched; batch composition does not
// change a temperature-0 output).
const std::vector<Request>& draft_requests32() {
  static const std::vector<Request> reqs = testing::mixed_requests(32, 12, 77);
  return reqs;
}
const std::vector<std::vector<int32_t>>& draft_reference32() {
  static const std::vector<std::vector<int32_t>> out = run_with_draft(nullptr, draft_requests32()).tokens;
  return out;
}

TEST(DraftModelProposer, ADraftThatIsTheModelHasEveryGuessAccepted) {
  const EngineRun spec = run_with_draft(target().model.get(), draft_requests32());
  EXPECT_EQ(spec.tokens, draft_reference32());
  EXPECT_GT(spec.stats.spec_num_draft_tokens, 32 * 6);
  EXPECT_EQ(spec.stats.spec_num_accepted_tokens, spec.stats.spec_num_draft_tokens);
  EXPECT_EQ(spec.stats.kv_usage, 0.0);
  EXPECT_EQ(spec.stats.draft_kv_usage, 0.0);
}

TEST(DraftModelProposer, AnotherModelsGuessesKeepOutputsUnderPreemption) {
  const EngineRun spec = run_with_draft(other_draft().model.get(), draft_requests32(), /*n_kv_blocks=*/40);
  EXPECT_EQ(spec.tokens, draft_reference32());
  EXPECT_GT(spec.stats.n_preemptions, 0);
  EXPECT_GT(spec.stats.spec_num_draft_tokens, spec.stats.spec_num_accepted_tokens);
  EXPECT_EQ(spec.stats.kv_usage, 0.0);
  EXPECT_EQ(spec.stats.draft_kv_usage, 0.0);
}

void expect_some_accepted_some_rejected_and_all_freed(const EngineStats& s) {
  EXPECT_GT(s.spec_num_accepted_tokens, 0);
  EXPECT_GT(s.spec_num_draft_tokens, s.spec_num_accepted_tokens);
  EXPECT_EQ(s.kv_usage, 0.0);
  EXPECT_EQ(s.draft_kv_usage, 0.0);
}

TEST(DraftModelProposer, BatchedOutputsEqualPlainDecodingAt32Requests) {
  const EngineRun spec = run_with_draft(q4_draft().model.get(), draft_requests32());
  EXPECT_EQ(spec.tokens, draft_reference32());
  expect_some_accepted_some_rejected_and_all_freed(spec.stats);
}

TEST(DraftModelProposer, PreemptedOutputsEqualPlainDecodingAt32Requests) {
  // 40 blocks: 640 token slots (in each pool) for 32 requests of up to ~410 tokens.
  const EngineRun spec = run_with_draft(q4_draft().model.get(), draft_requests32(), /*n_kv_blocks=*/40);
  EXPECT_EQ(spec.tokens, draft_reference32());
  EXPECT_GT(spec.stats.n_preemptions, 0);
  expect_some_accepted_some_rejected_and_all_freed(spec.stats);
}

TEST(DraftModelProposer, AloneOutputsEqualPlainDecodingAt32Requests) {
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::DraftModel;
  cfg.speculative.draft_model = q4_draft().model.get();
  cfg.speculative.adaptive = false;
  auto engine = Engine::create(*target().model, *target().tokenizer, cfg);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  for (size_t i = 0; i < draft_requests32().size(); ++i) {
    EXPECT_EQ(testing::run_requests(**engine, {draft_requests32()[i]})[0].tokens, draft_reference32()[i])
        << "request " << i;
    EXPECT_EQ((*engine)->stats().draft_kv_usage, 0.0) << "request " << i;
  }
  expect_some_accepted_some_rejected_and_all_freed((*engine)->stats());
}

TEST(DraftModelProposer, TheEngineRefusesADraftOfAnotherVocabularyOrAShorterContext) {
  testing::LoadedModel llama3 = testing::load_shared_model("synth-llama3.Q8_0.gguf");   // vocab 1024
  testing::LoadedModel qwen3 = testing::load_shared_model("synth-qwen3.Q8_0.gguf");     // vocab 1024, context 40960
  EngineConfig cfg;
  cfg.speculative.method = SpeculativeMethod::DraftModel;
  cfg.speculative.draft_model = llama3.model.get();
  auto vocab = Engine::create(*target().model, *target().tokenizer, cfg);
  ASSERT_FALSE(vocab.ok());
  EXPECT_NE(vocab.error().message.find("vocabulary"), std::string::npos) << vocab.error().message;

  cfg.speculative.draft_model = qwen3.model.get();
  cfg.max_model_len = 50000;
  auto context = Engine::create(*llama3.model, *llama3.tokenizer, cfg);
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.error().message.find("--max-model-len"), std::string::npos) << context.error().message;

  cfg.speculative.draft_model = nullptr;
  EXPECT_FALSE(Engine::create(*target().model, *target().tokenizer, cfg).ok());
}

}  // namespace
}  // namespace kairo::engine
