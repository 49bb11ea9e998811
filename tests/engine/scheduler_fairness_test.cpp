// The scheduler with several tenants (engine/fair_share.h): budget, seats, admission order and preemption shared
// by weight, and the plain order kept while one tenant is at work.
#include <gtest/gtest.h>

#include "engine/scheduler.h"
#include "scheduler_test_support.h"

namespace kairo::engine {
namespace {

using SchedulerFairnessTest = SchedulerTest;

TEST_F(SchedulerFairnessTest, OneNamedTenantGetsThePlainOrder) {
  make(64, SchedulerConfig{16, 8, 100, 1, false});
  for (RequestId id = 1; id <= 4; ++id) sched_->add(seq(id, 10, 0, "a"));
  EXPECT_EQ(shape(step()), (Shape{{1, 10}, {2, 6}}));
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 4}, {3, 10}, {4, 1}}));
}

TEST_F(SchedulerFairnessTest, AShortPromptIsNotHeldBehindAnotherTenantsLongOne) {
  make(64, SchedulerConfig{16, 8, 100, 1, false});
  sched_->add(seq(1, 100, 0, "a"));
  EXPECT_EQ(shape(step()), (Shape{{1, 16}}));
  sched_->add(seq(2, 6, 0, "b"));
  // Equal weights: b needs 6, under its half of 16, and gets it all now; a's chunk takes the other 10.
  EXPECT_EQ(shape(step()), (Shape{{1, 10}, {2, 6}}));
  // b decodes; a takes everything else.
  EXPECT_EQ(shape(step()), (Shape{{1, 15}, {2, 1}}));
}

TEST_F(SchedulerFairnessTest, AnotherTenantsQueueIsNotServedFirst) {
  make(64, SchedulerConfig{16, 8, 100, 1, false});
  for (RequestId id = 1; id <= 10; ++id) sched_->add(seq(id, 8, 0, "a"));
  sched_->add(seq(11, 4, 0, "b"));
  sched_->add(seq(12, 4, 0, "b"));
  // FCFS would give the step to requests 1 and 2; fairly, a and b get 8 tokens each.
  EXPECT_EQ(shape(step()), (Shape{{1, 8}, {11, 4}, {12, 4}}));
}

TEST_F(SchedulerFairnessTest, WeightsSetEachTenantsShareOfTheBudget) {
  make(64, SchedulerConfig{16, 8, 100, 1, false});
  sched_->add(seq(1, 100, 0, "a", 1.0));
  sched_->add(seq(2, 100, 0, "b", 3.0));
  EXPECT_EQ(shape(step()), (Shape{{1, 4}, {2, 12}}));
  EXPECT_EQ(shape(step()), (Shape{{1, 4}, {2, 12}}));
}

TEST_F(SchedulerFairnessTest, SeatsAreSharedWhileBothTenantsWait) {
  make(64, SchedulerConfig{100, 4, 100, 1, false});
  for (RequestId id = 1; id <= 6; ++id) sched_->add(seq(id, 2, 0, "a"));
  for (RequestId id = 7; id <= 12; ++id) sched_->add(seq(id, 2, 0, "b"));
  // Two seats each, alternating by virtual time; FCFS would seat requests 1-4 of a.
  EXPECT_EQ(shape(step()), (Shape{{1, 2}, {7, 2}, {2, 2}, {8, 2}}));
}

TEST_F(SchedulerFairnessTest, ATenantAloneInTheQueueTakesTheFreeSeats) {
  make(64, SchedulerConfig{100, 4, 100, 1, false});
  sched_->add(seq(1, 2, 0, "b"));
  for (RequestId id = 2; id <= 6; ++id) sched_->add(seq(id, 2, 0, "a"));
  // b has nothing more waiting: a is over its seat share of 2, and still fills the seats (work-conserving).
  EXPECT_EQ(shape(step()), (Shape{{1, 2}, {2, 2}, {3, 2}, {4, 2}}));
}

TEST_F(SchedulerFairnessTest, PreemptionTakesTheNewestRequestOfTheTenantServedMost) {
  // 4 usable blocks of 4 slots. a's two prompts are admitted alone; then b's one-token prompt; then a's first request
  // needs a third block with none free.
  auto run = [&](const std::string& tenant_b) {
    seqs_.clear();
    make(5, SchedulerConfig{64, 8, 100, 1, false});
    Sequence* a1 = seq(1, 7, 0, "a");
    Sequence* a2 = seq(2, 7, 0, "a");
    sched_->add(a1);
    sched_->add(a2);
    step();  // a1, a2: 7 tokens each (2 blocks each), one sampled
    sched_->add(seq(3, 1, 0, tenant_b));
    step();  // a1, a2 decode (slot 7), b1 admitted
    StepPlan p = step();
    return p.preempted.empty() ? RequestId{0} : p.preempted.front()->id;
  };
  EXPECT_EQ(run("a"), RequestId{3});  // one tenant: the most recently admitted
  EXPECT_EQ(run("b"), RequestId{2});  // a was served more: its newest request, not b's
}

TEST_F(SchedulerFairnessTest, AnotherTenantsPromptGoesFirstAndItsDecodesTakeTurnsWithinItsShare) {
  make(64, SchedulerConfig{16, 8, 100, 1, false, /*fair_min_chunk=*/4});
  for (RequestId id = 1; id <= 6; ++id) sched_->add(seq(id, 2, 0, "a"));
  step();  // a alone: all six prompts
  sched_->add(seq(7, 2, 0, "b"));
  // b's prompt arrives one step's credit behind a: a yields, b's prompt runs in full and a keeps min_chunk (4) of
  // its six decodes.
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {7, 2}}));
  // b decodes: a's share is capped at min_chunk again; the two held back go first, then the oldest of the rest.
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 1}, {5, 1}, {6, 1}, {7, 1}}));
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {7, 1}}));
}

TEST_F(SchedulerFairnessTest, ATenantWhoseRequestEndedKeepsTheOthersStepsShortBriefly) {
  make(64, SchedulerConfig{16, 8, 100, 1, false, /*fair_min_chunk=*/4, /*fair_linger_steps=*/2});
  sched_->add(seq(1, 100, 0, "a"));
  Sequence* b = seq(2, 2, 0, "b");
  sched_->add(b);
  step();
  sched_->remove(b);  // b's request ended; its client's next one is on its way
  // Two steps in which a keeps min_chunk, as while b was at work; then a alone takes whole steps.
  EXPECT_EQ(step().n_tokens, 4);
  EXPECT_EQ(step().n_tokens, 4);
  EXPECT_EQ(step().n_tokens, 16);
}

// kairo serve --api-keys-file: while one tenant has work its steps are cut to the solo budget (another tenant's request
// then waits for a short step), but never below its running decodes, which all run every step; with two tenants at
// work the whole budget is shared.
TEST_F(SchedulerFairnessTest, ATenantAloneGetsTheSoloBudgetAndAllItsDecodes) {
  SchedulerConfig cfg{64, 16, 100, 1, false};
  cfg.fair_linger_steps = 0;
  cfg.fair_solo_budget = 4;
  make(256, cfg);
  sched_->add(seq(1, 10, 0, "a"));
  EXPECT_EQ(shape(step()), (Shape{{1, 4}}));
  // b arrives: a fair step, the whole budget shared (b's prompt fits its share).
  for (RequestId id = 2; id <= 7; ++id) sched_->add(seq(id, 1, 0, "a"));
  sched_->add(seq(8, 3, 0, "b"));
  const StepPlan shared = step();
  EXPECT_GT(shared.n_tokens, 4);
  Sequence* b = nullptr;
  for (const ScheduledChunk& c : shared.chunks) {
    if (c.seq->id == 8) b = c.seq;
  }
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->n_computed, 3);
  sched_->remove(b);
  // a alone again, with more decodes than the solo budget: every one of them runs, and nothing else.
  int n_running_decodes = 0;
  for (RequestId id = 1; id <= 7; ++id) {
    const Sequence& s = *seqs_[id - 1];
    n_running_decodes += s.status == SeqStatus::Running && s.n_uncomputed() == 1 ? 1 : 0;
  }
  ASSERT_GT(n_running_decodes, 4);
  const StepPlan solo = step();
  EXPECT_EQ(solo.n_tokens, n_running_decodes);
  for (const ScheduledChunk& c : solo.chunks) EXPECT_EQ(c.n_new, 1);
}

}  // namespace
}  // namespace kairo::engine
