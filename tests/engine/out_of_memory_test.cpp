// The engine out of memory: a KV pool that cannot be allocated is an Error from Engine::create (forced by capping a
// forked child's address space); a step whose kernel scratch cannot grow on a pool thread ends its requests with
// an error that says so and what to change; a proposer that runs out only costs the step its guesses. None of them
// lets a std::bad_alloc kill the server.
#include <gtest/gtest.h>

#include "address_space_cap.h"
#include "core/out_of_memory.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "fake_device.h"

namespace kairo::engine {
namespace {

using kairo::testing::run_with_address_space_cap;

TEST(EngineOutOfMemory, AKvPoolThatCannotBeAllocatedIsAnErrorFromCreate) {
  if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  testing::LoadedModel lm;
  const auto run = run_with_address_space_cap(
      16ull << 20,
      [&] {
        EngineConfig cfg;
        cfg.n_threads = 1;
        cfg.n_kv_blocks = 200000;  // 3.2M token slots: 390 MiB per layer for K alone, 1.5 GiB in all
        auto engine = Engine::create(*lm.model, *lm.tokenizer, cfg);
        return engine.ok() ? std::string("created") : engine.error().message;
      },
      [&] { lm = testing::load_shared_model("synth-llama-gqa.f16.gguf"); });
  ASSERT_TRUE(run.ok()) << run.how();
  const std::string& msg = run.output;
  EXPECT_EQ(msg.rfind("the KV cache needs 1.53 GiB but cannot allocate 390.63 MiB for the KV cache: the system has no "
                      "more memory; this process may map at most ",
                      0),
            0u)
      << msg;
  const std::string fix = "; lower --kv-cache-memory or --mem-budget-gb (kairo plan predicts what fits)";
  EXPECT_EQ(msg.substr(msg.size() - std::min(msg.size(), fix.size())), fix) << msg;
}

// Once armed, every matmul's scratch "cannot grow" on the step's last pool thread, as thread_scratch throws when the
// system has no memory left.
class ScratchFailingDevice : public kairo::testing::FakeGpuDevice {
 public:
  std::atomic<bool> out_of_scratch{false};
  void begin_step(ThreadPool& pool) override {
    pool_ = &pool;
    FakeGpuDevice::begin_step(pool);
  }
  void matmul(const kernels::DeviceMatrix* ws, int n_mats, kernels::DeviceSpan x, const kernels::DeviceSpan* ys,
              int64_t n_tokens, kernels::Numerics numerics) override {
    if (out_of_scratch) {
      pool_->run([](int t, int n) {
        if (t == n - 1) throw OutOfMemory(96ull << 20, "CPU kernel scratch");
      });
    }
    FakeGpuDevice::matmul(ws, n_mats, x, ys, n_tokens, numerics);
  }

 private:
  ThreadPool* pool_ = nullptr;
};

Request greedy(std::vector<int32_t> prompt, int max_tokens) {
  Request r;
  r.prompt_tokens = std::move(prompt);
  r.sampling.temperature = 0;
  r.stop.max_tokens = max_tokens;
  r.stop.ignore_eos = true;
  return r;
}

TEST(EngineOutOfMemory, AStepThatRunsOutOfScratchOnAPoolThreadFailsItsRequestsWithWhatToChange) {
  auto device = std::make_shared<ScratchFailingDevice>();
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*m)->file());
  ASSERT_TRUE(tok.ok());
  EngineConfig cfg;
  cfg.n_threads = 2;  // the failing share is a worker's
  auto engine = Engine::create(**m, **tok, cfg);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  ASSERT_TRUE(testing::run_requests(**engine, {greedy({1, 10, 11}, 3)})[0].error.empty());  // serving normally

  device->out_of_scratch = true;
  const auto done = testing::run_requests(**engine, {greedy({1, 10, 11, 12, 13}, 3)});
  const std::string expected = "a step of 5 tokens ran out of memory on fake-gpu: cannot allocate 96.00 MiB of CPU "
                               "kernel scratch" + address_space_limit_note() +
                               "; lower --max-num-batched-tokens or --max-num-seqs, or give the server more memory "
                               "(kairo plan predicts what fits)";
  EXPECT_EQ(done[0].reason, FinishReason::Abort);
  EXPECT_EQ(done[0].error, expected);
  EXPECT_EQ((*engine)->failure(), expected);
  EXPECT_EQ((*engine)->failure_state().kind, FailureKind::OutOfMemory);
  auto refused = (*engine)->submit(greedy({1, 2}, 1), [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, expected);
}

// Guesses the next token right, and runs out of memory on its second call, as a draft model whose step cannot grow.
class RunsOutProposer : public Proposer {
 public:
  explicit RunsOutProposer(std::vector<int32_t> right) : right_(std::move(right)) {}
  void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) override {
    out.clear();
    if (++n_calls_ == 2) throw OutOfMemory(64ull << 20, "CPU kernel scratch");
    const size_t at = tokens.size() - static_cast<size_t>(n_prompt);
    for (size_t i = at; i < right_.size() && out.size() < static_cast<size_t>(k); ++i) out.push_back(right_[i]);
  }
  void release(uint64_t) override { ++n_released; }
  int n_released = 0;

 private:
  std::vector<int32_t> right_;
  int n_calls_ = 0;
};

TEST(EngineOutOfMemory, AProposerThatRunsOutCostsTheStepItsGuessesNotTheRequest) {
  const testing::LoadedModel& lm = [] {
    static testing::LoadedModel m = testing::load_shared_model("synth-llama-gqa.Q8_0.gguf");
    return std::cref(m);
  }();
  const Request r = greedy({1, 10, 11, 12}, 12);
  EngineConfig plain;
  plain.n_threads = 1;
  auto reference_engine = Engine::create(*lm.model, *lm.tokenizer, plain);
  ASSERT_TRUE(reference_engine.ok());
  const std::vector<int32_t> reference = testing::run_requests(**reference_engine, {r})[0].tokens;

  EngineConfig cfg = plain;
  auto proposer = std::make_shared<RunsOutProposer>(reference);
  cfg.speculative.method = SpeculativeMethod::Custom;
  cfg.speculative.custom = proposer;
  cfg.speculative.num_tokens = 3;
  cfg.speculative.adaptive = false;
  auto engine = Engine::create(*lm.model, *lm.tokenizer, cfg);
  ASSERT_TRUE(engine.ok());
  const auto done = testing::run_requests(**engine, {r});
  EXPECT_TRUE(done[0].error.empty()) << done[0].error;
  EXPECT_EQ(done[0].tokens, reference);
  EXPECT_GE(proposer->n_released, 2);  // the failed step's request, then its end
  EXPECT_TRUE((*engine)->failure().empty());
}

}  // namespace
}  // namespace kairo::engine
