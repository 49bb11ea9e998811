// Issue 25's fairness target, replayed on the scheduler alone in simulated time: tenant A's burst of 64 long prompts
// must not push tenant B's p99 time to first token past 2x B's time alone (equal weights), and A must keep moving.
//
// Time model: a step costs kFixed + its token count (units of one token's compute). Every token of a step finishes
// when the step does, so what B waits for is the step in progress when its request arrives plus the step(s) that
// carry its prompt. kFixed = 10 tokens is about what reading the weights costs a small model on a CPU next to one
// token's compute; the bound holds with any kFixed >= 0 (a larger one only shrinks the ratio).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "engine/scheduler.h"
#include "scheduler_test_support.h"

namespace kairo::engine {
namespace {

constexpr double kFixed = 10;

struct TtftClient {
  std::vector<Sequence*> queue;  // not yet sent, in order
  int concurrency = 0;           // closed loop: a new request as soon as one finishes
  int in_flight = 0;
};

struct SimResult {
  std::vector<double> b_ttft;       // arrival to the end of the step that sampled its first token
  double a_done = 0;                // when A's last request finished
  double b_first_ttft = 0;          // B's first request: it arrives in the middle of one of A's solo steps
  int max_a_decode_gap = 0;         // most steps an A request mid-output waited for its next token while B worked
  int n_a_finished = 0;
  int n_full_steps_after_b = 0;     // steps once B was done that carried the whole budget (work conservation)
  int n_steps_after_b = 0;
};

class SchedulerFairTtftTest : public SchedulerTest {
 protected:
  static constexpr int kBudget = 128;
  static constexpr int kPromptA = 340, kOutA = 16, kPromptB = 57, kOutB = 16;

  // B's requests arrive 1 unit after the previous one finished (the client's round trip), so each lands in the middle
  // of a step; A's burst starts `lead` units before B.
  // solo_budget: SchedulerConfig::fair_solo_budget (0: whole steps while A is alone).
  SimResult simulate(bool with_a, double lead, int solo_budget = 0) {
    seqs_.clear();
    SchedulerConfig cfg{kBudget, 64, 256, 1, false};
    cfg.fair_solo_budget = solo_budget;
    make(8000, cfg);
    TtftClient a, b;
    a.concurrency = 64;
    b.concurrency = 2;
    if (with_a) {
      for (RequestId id = 1; id <= 64; ++id) a.queue.push_back(seq(id, kPromptA, 0, "a"));
    }
    for (RequestId id = 101; id <= 108; ++id) b.queue.push_back(seq(id, kPromptB, 0, "b"));
    std::vector<std::pair<double, Sequence*>> arrivals;  // (time, request)
    std::vector<double> arrived_at(200, 0), last_token_step(200, 0);
    auto send = [&](TtftClient& c, double t) {
      while (c.in_flight < c.concurrency && !c.queue.empty()) {
        arrivals.emplace_back(t, c.queue.front());
        c.queue.erase(c.queue.begin());
        ++c.in_flight;
      }
    };
    send(a, 0);
    send(b, with_a ? lead : 0);
    SimResult r;
    double now = 0;
    int step_no = 0;
    for (int guard = 0; guard < 20000; ++guard) {
      // The engine takes in what arrived while the last step ran.
      for (auto it = arrivals.begin(); it != arrivals.end();) {
        if (it->first <= now) {
          arrived_at[it->second->id] = it->first;
          sched_->add(it->second);
          it = arrivals.erase(it);
        } else {
          ++it;
        }
      }
      if (sched_->n_running() == 0 && sched_->n_waiting() == 0) {
        if (arrivals.empty()) break;
        now = std::min_element(arrivals.begin(), arrivals.end())->first;
        continue;
      }
      StepPlan p = sched_->schedule();
      EXPECT_TRUE(p.preempted.empty());  // the pool holds the whole burst: no preemption clouds the timing
      sched_->complete(p);
      ++step_no;
      now += kFixed + p.n_tokens;
      const bool b_at_work = b.in_flight > 0 || !b.queue.empty();
      if (with_a && !b_at_work) {
        ++r.n_steps_after_b;
        r.n_full_steps_after_b += p.n_tokens == kBudget ? 1 : 0;
      }
      std::vector<Sequence*> finished;
      for (const ScheduledChunk& c : p.chunks) {
        if (!c.needs_sample) continue;
        Sequence* s = c.seq;
        const bool is_b = s->request.tenant == "b";
        if (s->n_generated() == 0 && is_b) {
          r.b_ttft.push_back(now - arrived_at[s->id]);
          if (s->id == 101) r.b_first_ttft = r.b_ttft.back();
        }
        if (!is_b && s->n_generated() > 0 && b_at_work) {
          r.max_a_decode_gap = std::max(r.max_a_decode_gap, step_no - static_cast<int>(last_token_step[s->id]));
        }
        last_token_step[s->id] = step_no;
        s->tokens.push_back(7);
        if (s->n_generated() == (is_b ? kOutB : kOutA)) finished.push_back(s);
      }
      for (Sequence* s : finished) {
        sched_->remove(s);
        if (s->request.tenant == "b") {
          --b.in_flight;
          send(b, now + 1);
        } else {
          --a.in_flight;
          ++r.n_a_finished;
          r.a_done = now;
          send(a, now);
        }
      }
    }
    return r;
  }

  // As `kairo bench serve` computes it (bench/serve/metrics.cpp): linear between the two nearest ranks.
  static double p99(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double pos = 0.99 * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  }
};

TEST_F(SchedulerFairTtftTest, AnInteractiveTenantsFirstTokenStaysWithinTwiceItsTimeAloneDuringABurst) {
  const SimResult alone = simulate(/*with_a=*/false, 0);
  ASSERT_EQ(alone.b_ttft.size(), 8u);
  // B starts while A's burst is in full swing: A's running prompts and decodes fill every step.
  const double lead = 3000;
  const SimResult shared = simulate(/*with_a=*/true, lead);
  ASSERT_EQ(shared.b_ttft.size(), 8u);
  const double ratio = p99(shared.b_ttft) / p99(alone.b_ttft);
  std::printf("B p99 TTFT: alone %.0f, during A's burst %.0f (%.2fx); A done at %.0f; A's longest decode gap %d\n",
              p99(alone.b_ttft), p99(shared.b_ttft), ratio, shared.a_done, shared.max_a_decode_gap);
  EXPECT_LE(ratio, 2.0);
  // A is slowed, never starved: all of it finishes, and its decodes held back by the fair share take turns.
  EXPECT_EQ(shared.n_a_finished, 64);
  EXPECT_LE(shared.max_a_decode_gap, 8);
  // Work-conserving: once B is done, A alone gets whole steps again (all but the burst's tail, when it has less).
  EXPECT_GT(shared.n_full_steps_after_b, shared.n_steps_after_b / 2);
}

// B's first request lands in the middle of one of A's solo steps and waits for it: a whole 128-token step without a
// solo budget, half of one with a budget of 64 (kairo serve's default with --api-keys-file is a quarter). A pays in
// step overhead only while it is alone: its prompts move in 64-token chunks instead of 128.
TEST_F(SchedulerFairTtftTest, AShortSoloStepShortensTheWaitOfAnotherTenantsFirstRequest) {
  const SimResult alone = simulate(/*with_a=*/false, 0);
  const double lead = 3000 + kBudget / 2;  // mid-step either way
  const SimResult whole = simulate(/*with_a=*/true, lead);
  const SimResult solo = simulate(/*with_a=*/true, lead, kBudget / 2);
  std::printf(
      "B's first TTFT: alone %.0f, whole solo steps %.0f, half %.0f; B p99 %.2fx / %.2fx alone; A done at %.0f "
      "/ %.0f\n",
      alone.b_first_ttft, whole.b_first_ttft, solo.b_first_ttft, p99(whole.b_ttft) / p99(alone.b_ttft),
      p99(solo.b_ttft) / p99(alone.b_ttft), whole.a_done, solo.a_done);
  ASSERT_EQ(solo.b_ttft.size(), 8u);
  EXPECT_LT(solo.b_first_ttft, whole.b_first_ttft);
  EXPECT_LE(p99(solo.b_ttft), p99(whole.b_ttft));
  EXPECT_LE(p99(solo.b_ttft) / p99(alone.b_ttft), 2.0);
  EXPECT_EQ(solo.n_a_finished, 64);
  // The cost: one more step overhead (kFixed) per 64 prompt tokens while A is alone, a few percent of A's time.
  EXPECT_LT(solo.a_done, whole.a_done * 1.10);
}

}  // namespace
}  // namespace kairo::engine
