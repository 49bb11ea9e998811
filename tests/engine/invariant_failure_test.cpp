// A broken invariant on the engine thread (a failed KAIRO_CHECK, core/check.h) must not take the server down or
// leave a client waiting: the requests in flight end with an error that names the check, new requests are refused
// with it, and the engine keeps answering. The violations here come from a custom proposer, which runs on the engine
// thread inside a step (and when a request is freed), exactly where the KV and scheduler checks throw.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/check.h"
#include "engine/engine.h"
#include "engine_test_support.h"

namespace kairo::engine {
namespace {

Request greedy(int max_tokens) {
  Request r;
  r.prompt_tokens = {1, 10, 11, 12};
  r.sampling.temperature = 0;
  r.stop.max_tokens = max_tokens;
  r.stop.ignore_eos = true;
  return r;
}

// Proposes nothing. Fails a check in the first step where n_decoding requests decode together (so that all of them
// are in flight by then, however the threads are scheduled), or when request `doomed` is freed.
class FailingProposer final : public Proposer {
 public:
  FailingProposer(size_t n_decoding, uint64_t doomed) : n_decoding_(n_decoding), doomed_(doomed) {}
  void propose(std::span<const int32_t>, int, int, std::vector<int32_t>& out) override { out.clear(); }
  void propose_all(std::span<const ProposalSlot> slots) override {
    // Until all of them decode, each step waits a little: on a loaded machine the first request could otherwise
    // finish all its tokens before the test thread has submitted the others.
    if (n_decoding_ > 0 && slots.size() < n_decoding_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    KAIRO_CHECK(slots.size() != n_decoding_, "test: block %d released twice (%zu requests decoding)", 42,
                slots.size());
    Proposer::propose_all(slots);
  }
  void release(uint64_t request) override {
    KAIRO_CHECK(request != doomed_, "test: request %llu frees a block it does not hold",
                static_cast<unsigned long long>(request));
  }

 private:
  size_t n_decoding_;
  uint64_t doomed_;
};

std::unique_ptr<Engine> engine_with(std::shared_ptr<Proposer> proposer) {
  EngineConfig cfg;
  cfg.n_threads = 1;
  cfg.speculative.method = SpeculativeMethod::Custom;
  cfg.speculative.custom = std::move(proposer);
  cfg.speculative.num_tokens = 2;
  cfg.speculative.adaptive = false;  // propose in every decode step
  auto engine = Engine::create(*testing::demo_model().model, *testing::demo_model().tokenizer, cfg);
  EXPECT_TRUE(engine.ok()) << engine.error().message;
  return std::move(engine).value();
}

void expect_refused_with(Engine& engine, const std::string& error) {
  EXPECT_EQ(engine.failure(), error);
  EXPECT_EQ(engine.failure_state().kind, FailureKind::BrokenInvariant);
  EXPECT_EQ(engine.failure_state().message, error);
  auto refused = engine.submit(greedy(4), [](const RequestOutput&) {});
  ASSERT_TRUE(std::holds_alternative<SubmitRejection>(refused));
  EXPECT_EQ(std::get<SubmitRejection>(refused).kind, SubmitError::DeviceFailed);
  EXPECT_EQ(std::get<SubmitRejection>(refused).message, error);
  EXPECT_EQ(engine.stats().n_running, 0);
  EXPECT_EQ(engine.stats().n_waiting, 0);
}

TEST(InvariantFailure, AViolationInAStepFailsTheRequestsInFlightAndRefusesNewOnes) {
  auto engine = engine_with(std::make_shared<FailingProposer>(/*n_decoding=*/3, /*doomed=*/0));
  const auto out = testing::run_requests(*engine, {greedy(50), greedy(50), greedy(50)});
  const std::string& error = out[0].error;
  EXPECT_NE(error.find("internal error: the engine's KV bookkeeping broke an invariant "
                       "(tests/engine/invariant_failure_test.cpp:"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(": test: block 42 released twice (3 requests decoding) (check: slots.size() != n_decoding_)); "
                       "the server takes no more requests until it is restarted"),
            std::string::npos)
      << error;
  for (const auto& f : out) {
    EXPECT_EQ(f.reason, FinishReason::Abort);
    EXPECT_EQ(f.error, error);
    EXPECT_LT(f.tokens.size(), 50u);
  }
  expect_refused_with(*engine, error);
}

TEST(InvariantFailure, AViolationWhileFreeingAFinishedRequestStillDeliversItsOutput) {
  // Request ids count from 1 in submission order: the short second request's release throws, while the long first
  // one (submitted before it, so surely in flight) is still decoding.
  auto engine = engine_with(std::make_shared<FailingProposer>(/*n_decoding=*/0, /*doomed=*/2));
  const auto out = testing::run_requests(*engine, {greedy(120), greedy(3)});
  EXPECT_EQ(out[1].reason, FinishReason::Length);  // computed before anything broke
  EXPECT_EQ(out[1].tokens.size(), 3u);
  EXPECT_TRUE(out[1].error.empty()) << out[1].error;
  EXPECT_EQ(out[0].reason, FinishReason::Abort);
  EXPECT_LT(out[0].tokens.size(), 120u);
  EXPECT_NE(out[0].error.find("test: request 2 frees a block it does not hold"), std::string::npos) << out[0].error;
  expect_refused_with(*engine, out[0].error);
}

}  // namespace
}  // namespace kairo::engine
