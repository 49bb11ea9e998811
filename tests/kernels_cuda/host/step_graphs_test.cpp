// Step graphs (kernels/cuda/step_graphs.h) over a fake runtime: which segments replay, which are captured, which
// run launch by launch, and that the work always runs exactly once and in order.
#include "kernels/cuda/step_graphs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kairo::kernels::cuda {
namespace {

// Captured launches are kept, not run; launching a graph runs them.
struct FakeRuntime : GraphRuntime {
  std::vector<std::string>* log;
  bool capturing = false;
  bool refuse = false;
  std::vector<std::vector<std::function<void()>>> graphs;
  std::vector<std::function<void()>> pending;
  int destroyed = 0;

  explicit FakeRuntime(std::vector<std::string>* l) : log(l) {}
  void begin_capture() override { capturing = true; }
  void* end_capture() override {
    capturing = false;
    if (refuse) return nullptr;
    graphs.push_back(std::move(pending));
    pending.clear();
    return reinterpret_cast<void*>(graphs.size());
  }
  void launch(void* g) override {
    log->push_back("graph");
    for (auto& f : graphs[reinterpret_cast<size_t>(g) - 1]) f();
  }
  void destroy(void*) override { ++destroyed; }
};

struct Harness {
  std::vector<std::string> log;
  FakeRuntime* rt;
  StepGraphs graphs;
  explicit Harness(bool enabled = true)
      : rt(new FakeRuntime(&log)), graphs(std::unique_ptr<GraphRuntime>(rt), enabled) {}

  // A launch that logs its name when it runs (and is only kept while the runtime captures).
  void launch(const std::string& name, int arg, bool capturable = true) {
    graphs.record(Signature(1, arg), [this, name] {
      if (rt->capturing) rt->pending.push_back([this, name] { log.push_back(name); });
      else log.push_back(name);
    }, capturable);
  }
  void step(int arg) {
    launch("a", arg);
    launch("b", 7);
    graphs.flush();
  }
};

TEST(StepGraphs, TheSecondIdenticalSegmentIsCapturedAndLaterOnesReplay) {
  Harness h;
  h.step(1);  // first sighting: eager
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "b"}));
  h.log.clear();
  h.step(1);  // second: captured, then launched once
  EXPECT_EQ(h.log, (std::vector<std::string>{"graph", "a", "b"}));
  h.log.clear();
  h.step(1);  // replay
  EXPECT_EQ(h.log, (std::vector<std::string>{"graph", "a", "b"}));
  EXPECT_EQ(h.graphs.stats().eager, 1);
  EXPECT_EQ(h.graphs.stats().captured, 1);
  EXPECT_EQ(h.graphs.stats().replayed, 1);
}

TEST(StepGraphs, AnyDifferentArgumentIsADifferentSegment) {
  Harness h;
  h.step(1);
  h.step(1);
  h.log.clear();
  h.step(2);  // another argument: never seen, eager
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(h.graphs.stats().replayed, 0);
  EXPECT_EQ(h.graphs.stats().eager, 2);
}

TEST(StepGraphs, SegmentsWithAnUncapturableLaunchAlwaysRunEagerly) {
  Harness h;
  for (int i = 0; i < 3; ++i) {
    h.launch("gemm", 1, /*capturable=*/false);
    h.launch("b", 7);
    h.graphs.flush();
  }
  EXPECT_EQ(h.graphs.stats().eager, 3);
  EXPECT_EQ(h.graphs.stats().captured, 0);
  EXPECT_EQ(h.log.size(), 6u);
}

TEST(StepGraphs, DisabledRunsEachLaunchWhenRecorded) {
  Harness h(/*enabled=*/false);
  h.launch("a", 1);
  EXPECT_EQ(h.log, (std::vector<std::string>{"a"}));  // before any flush
  h.graphs.flush();
  h.step(1);
  h.step(1);
  EXPECT_EQ(h.graphs.stats().captured, 0);
  EXPECT_EQ(h.log.size(), 5u);
}

TEST(StepGraphs, ARefusedCaptureRunsTheWorkAndTurnsGraphsOff) {
  Harness h;
  h.rt->refuse = true;
  h.step(1);
  h.log.clear();
  h.step(1);  // capture refused: the launches still run, eagerly
  EXPECT_EQ(h.log, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(h.graphs.enabled());
  h.log.clear();
  h.launch("c", 3);
  EXPECT_EQ(h.log, (std::vector<std::string>{"c"}));
}

TEST(StepGraphs, TheGraphCacheIsBounded) {
  Harness h;
  for (int arg = 0; arg < static_cast<int>(StepGraphs::kMaxGraphs) + 1; ++arg) {
    h.step(arg);
    h.step(arg);
  }
  EXPECT_EQ(h.graphs.stats().captured, static_cast<int64_t>(StepGraphs::kMaxGraphs) + 1);
  EXPECT_EQ(h.rt->destroyed, static_cast<int>(StepGraphs::kMaxGraphs));  // all dropped once, at the 65th capture
}

TEST(StepGraphs, SignaturesDependOnEveryValue) {
  int x = 0;
  EXPECT_EQ(Signature(3, &x, int64_t{5}, 1.5f).value(), Signature(3, &x, int64_t{5}, 1.5f).value());
  EXPECT_NE(Signature(3, &x, int64_t{5}, 1.5f).value(), Signature(3, &x, int64_t{6}, 1.5f).value());
  EXPECT_NE(Signature(3, &x, int64_t{5}, 1.5f).value(), Signature(4, &x, int64_t{5}, 1.5f).value());
  EXPECT_NE(Signature(3, &x, int64_t{5}, 1.5f).value(), Signature(3, &x + 1, int64_t{5}, 1.5f).value());
}

}  // namespace
}  // namespace kairo::kernels::cuda
