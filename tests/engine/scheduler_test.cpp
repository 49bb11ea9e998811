// Exact-state tests of the token-budget scheduler over a real KV manager (no model, no tensors).
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "scheduler_test_support.h"

namespace kairo::engine {
namespace {

TEST_F(SchedulerTest, DecodesFirstThenNewPromptsWithinTheBudget) {
  make(64, SchedulerConfig{10, 8, 100, 1, false});
  Sequence* a = seq(1, 6);
  sched_->add(a);
  EXPECT_EQ(shape(step()), (Shape{{1, 6}}));
  Sequence* b = seq(2, 20);
  sched_->add(b);
  // a decodes (1 token), b gets the remaining 9 of the budget.
  StepPlan p = step();
  EXPECT_EQ(shape(p), (Shape{{1, 1}, {2, 9}}));
  EXPECT_TRUE(p.chunks[0].needs_sample);
  EXPECT_FALSE(p.chunks[1].needs_sample);
  EXPECT_EQ(p.chunks[1].start, 0);
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 9}}));
  p = step();
  EXPECT_EQ(shape(p), (Shape{{1, 1}, {2, 2}}));
  EXPECT_TRUE(p.chunks[1].needs_sample);
  EXPECT_EQ(b->n_computed, 20);
}

TEST_F(SchedulerTest, OnlyOneLongPrefillPerStep) {
  make(64, SchedulerConfig{64, 8, 8, 1, false});
  sched_->add(seq(1, 30));
  sched_->add(seq(2, 30));
  // The first prompt is a long prefill (30 > 8); the second is held to an 8-token chunk.
  EXPECT_EQ(shape(step()), (Shape{{1, 30}, {2, 8}}));
}

TEST_F(SchedulerTest, SequenceCapLimitsAdmission) {
  make(64, SchedulerConfig{100, 2, 100, 4, false});
  for (RequestId id = 1; id <= 3; ++id) sched_->add(seq(id, 3));
  EXPECT_EQ(shape(step()), (Shape{{1, 3}, {2, 3}}));
  EXPECT_EQ(sched_->n_waiting(), 1);
}

TEST_F(SchedulerTest, PreemptsTheMostRecentlyAdmittedAndRecomputesIt) {
  make(4, SchedulerConfig{100, 8, 100, 4, false});  // 4 blocks of 4 tokens
  Sequence* a = seq(1, 7);  // 2 blocks
  Sequence* b = seq(2, 7);  // 2 blocks
  sched_->add(a);
  sched_->add(b);
  EXPECT_EQ(shape(step()), (Shape{{1, 7}, {2, 7}}));
  EXPECT_EQ(shape(step()), (Shape{{1, 1}, {2, 1}}));  // token 8 of each still fits their 2 blocks
  // Both now have 9 tokens: a's next decode needs a third block, there is none, so b (admitted last) goes.
  StepPlan p = step();
  EXPECT_EQ(shape(p), (Shape{{1, 1}}));
  ASSERT_EQ(p.preempted.size(), 1u);
  EXPECT_EQ(p.preempted[0], b);
  EXPECT_EQ(sched_->n_preemptions(), 1);
  EXPECT_EQ(b->n_computed, 0);
  EXPECT_EQ(b->tokens.size(), 9u) << "its generated tokens are kept";
  EXPECT_EQ(b->status, SeqStatus::Waiting);
  EXPECT_EQ(sched_->n_waiting(), 1);
  // While a holds 3 of the 4 blocks, b (needing 3) cannot come back.
  EXPECT_EQ(shape(step()), (Shape{{1, 1}}));
  // When a finishes, b is recomputed from its tokens so far and samples its next token.
  sched_->remove(a);
  p = step();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].seq, b);
  EXPECT_EQ(p.chunks[0].start + p.chunks[0].n_new, 9);
  EXPECT_TRUE(p.chunks[0].needs_sample);
  EXPECT_EQ(b->tokens.size(), 10u);
}

TEST_F(SchedulerTest, PriorityOrdersTheWaitingQueue) {
  make(64, SchedulerConfig{100, 1, 100, 4, true});
  sched_->add(seq(1, 2, /*priority=*/5));
  sched_->add(seq(2, 2, /*priority=*/0));
  sched_->add(seq(3, 2, /*priority=*/5));
  EXPECT_EQ(shape(step()), (Shape{{2, 2}}));
}

TEST_F(SchedulerTest, RemoveFreesBlocks) {
  make(8, SchedulerConfig{100, 8, 100, 4, false});
  Sequence* a = seq(1, 9);
  sched_->add(a);
  step();
  EXPECT_GT(kv_->usage(), 0.0);
  sched_->remove(a);
  EXPECT_EQ(kv_->usage(), 0.0);
  EXPECT_EQ(sched_->n_running(), 0);
}

// Always-on invariant checks (core/check.h): a request holds KV exactly while admitted, as many slots as it has
// computed; the failed call throws before it changes anything.
TEST_F(SchedulerTest, AdmittingARequestWhoseIdAlreadyHoldsKvIsCaught) {
  make(8, SchedulerConfig{100, 8, 100, 4, false});
  Sequence* a = seq(1, 6);
  ASSERT_TRUE(kv_->allocate_slots(1, a->tokens, 4).has_value());  // stale KV under a's id
  sched_->add(a);
  try {
    sched_->schedule();
    FAIL() << "no InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_EQ(e.message(), "scheduler: admitting request 1 with 0 tokens computed and 4 slots already in the KV cache");
  }
  EXPECT_EQ(sched_->n_running(), 0);
  EXPECT_EQ(kv_->n_tokens(1), 4);
}

TEST_F(SchedulerTest, RunningAForkWhoseKvDoesNotMatchIsCaught) {
  make(8, SchedulerConfig{100, 8, 100, 4, false});
  Sequence* a = seq(1, 6);
  sched_->add(a);
  step();
  Sequence* b = seq(2, 6);
  kv_->fork(1, 2);
  b->n_computed = 5;  // the KV holds 6
  try {
    sched_->add_running(b);
    FAIL() << "no InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_EQ(e.message(), "scheduler: request 2 starts running with 5 tokens computed but 6 slots in the KV cache");
  }
  EXPECT_EQ(sched_->n_running(), 1);
}

TEST_F(SchedulerTest, RejectingMoreTokensThanComputedIsCaught) {
  make(8, SchedulerConfig{100, 8, 100, 4, false});
  Sequence* a = seq(1, 3);
  sched_->add(a);
  step();
  try {
    sched_->reject_draft(*a, 4);
    FAIL() << "no InvariantViolation";
  } catch (const InvariantViolation& e) {
    EXPECT_EQ(e.message(), "scheduler: request 1 rejects 4 proposed tokens with 3 computed");
  }
  EXPECT_EQ(a->n_computed, 3);
}

}  // namespace
}  // namespace kairo::engine
