// The speculation gate weighs measured step times: memory-bound steps (flat T) always pay, compute-bound ones only
// with high acceptance; unmeasured steps are measured first, and a decline is re-examined now and then.
#include "engine/speculation_gate.h"

#include <gtest/gtest.h>

namespace kairo::engine {
namespace {

TEST(SpeculationGate, MeasuresThePlainStepFirstThenTheVerifyingOne) {
  SpeculationGate gate;
  EXPECT_FALSE(gate.worth_it(4, 16));  // T(4) unknown: run plain and measure it
  gate.observe_step(4, 0.010);
  EXPECT_TRUE(gate.worth_it(4, 16));   // T(20) unknown: speculate and measure it
  gate.observe_step(20, 0.011);
  EXPECT_TRUE(gate.worth_it(4, 16));   // memory-bound: 4 + 0.5 * 16 tokens in 11 ms beat 4 in 10 ms
  EXPECT_FALSE(gate.worth_it(4, 0));
  EXPECT_FALSE(gate.worth_it(0, 4));
}

TEST(SpeculationGate, ComputeBoundStepsNeedHighAcceptance) {
  // This EPYC, tinyllama Q4_0, 2 threads: 16 sequences decode in 50 ms, 16 x (1 + 4) tokens take 217 ms.
  SpeculationGate gate;
  gate.observe_step(16, 0.050);
  gate.observe_step(80, 0.217);
  for (int i = 0; i < 50; ++i) gate.observe_verification(4, 1);  // a quarter accepted
  EXPECT_NEAR(gate.acceptance(), 0.25, 1e-3);
  EXPECT_FALSE(gate.worth_it(16, 64));  // (16 + 16) / 217 ms < 16 / 50 ms
  for (int i = 0; i < 50; ++i) gate.observe_verification(4, 4);  // everything accepted
  EXPECT_TRUE(gate.worth_it(16, 64));   // (16 + 64) / 217 ms > 16 / 50 ms
}

TEST(SpeculationGate, ADeclineIsReexaminedEveryKExploreEverySteps) {
  SpeculationGate gate;
  gate.observe_step(16, 0.050);
  gate.observe_step(80, 0.400);
  for (int i = 0; i < 50; ++i) gate.observe_verification(4, 0);
  int n_yes = 0;
  for (int i = 0; i < 10 * SpeculationGate::kExploreEvery; ++i) n_yes += gate.worth_it(16, 64);
  EXPECT_EQ(n_yes, 10);
}

TEST(SpeculationGate, AnUnmeasuredVerifyingStepIsEstimatedFromALargerPromptStep) {
  // This EPYC, tinyllama Q4_0, 2 threads: 16 sequences decode in 43 ms, a 512-token prompt step takes 1.1 s.
  SpeculationGate gate;
  gate.observe_step(16, 0.043);
  gate.observe_step(512, 1.1, /*decode_only=*/false);
  EXPECT_DOUBLE_EQ(gate.step_seconds(512), 0.0) << "a prompt step is no decode-only measurement";
  // T(80) on the line from (16, 43 ms) to (512, 1.1 s): 179 ms. At the first guess of acceptance (0.5),
  // (16 + 32) / 179 ms < 16 / 43 ms: declined without trying it.
  EXPECT_NEAR(gate.estimated_seconds(80), 0.043 + 64.0 / 496.0 * (1.1 - 0.043), 1e-12);
  EXPECT_FALSE(gate.worth_it(16, 64));
  // Proposals that are all right pay even on the estimate: (16 + 64) / 179 ms > 16 / 43 ms.
  for (int i = 0; i < 50; ++i) gate.observe_verification(4, 4);
  EXPECT_TRUE(gate.worth_it(16, 64));
  // One sequence (memory-bound): T(5) estimated from T(1) and a 128-token prompt step pays at a guess's acceptance.
  SpeculationGate single;
  single.observe_step(1, 0.016);
  single.observe_step(128, 0.280, /*decode_only=*/false);
  EXPECT_TRUE(single.worth_it(1, 4));
  // Nothing measured above the verifying size: it is tried once and measured.
  SpeculationGate no_prompt_step;
  no_prompt_step.observe_step(16, 0.043);
  EXPECT_DOUBLE_EQ(no_prompt_step.estimated_seconds(80), 0.0);
  EXPECT_TRUE(no_prompt_step.worth_it(16, 64));
}

TEST(SpeculationGate, StepTimesAreMovingAveragesPerPowerOfTwoBucket) {
  SpeculationGate gate;
  gate.observe_step(16, 0.050);
  EXPECT_DOUBLE_EQ(gate.step_seconds(31), 0.050);  // 16..31 share a bucket
  EXPECT_DOUBLE_EQ(gate.step_seconds(32), 0.0);
  gate.observe_step(20, 0.100);
  EXPECT_NEAR(gate.step_seconds(16), 0.8 * 0.050 + 0.2 * 0.100, 1e-12);
  gate.observe_step(0, 1.0);   // ignored
  gate.observe_step(8, -1.0);  // ignored
  EXPECT_DOUBLE_EQ(gate.step_seconds(8), 0.0);
}

}  // namespace
}  // namespace kairo::engine
