#pragma once
// The scheduler tests' fixture: a real KV manager (no model, no tensors) and steps run like the engine runs them.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/scheduler.h"

namespace kairo::engine {

class SchedulerTest : public ::testing::Test {
 protected:
  void make(int n_blocks, SchedulerConfig cfg) {
    kv_ = std::make_unique<kv::KVCacheManager>(kv::KVCacheConfig{n_blocks + 1, 4, true});
    sched_ = std::make_unique<Scheduler>(cfg, *kv_);
  }
  Sequence* seq(RequestId id, int n_prompt, int priority = 0, std::string tenant = "", double weight = 1.0) {
    auto s = std::make_unique<Sequence>();
    s->id = id;
    for (int i = 0; i < n_prompt; ++i) s->tokens.push_back(100 * static_cast<int>(id) + i);
    s->n_prompt = n_prompt;
    s->request.priority = priority;
    s->request.tenant = std::move(tenant);
    s->request.tenant_weight = weight;
    s->arrival = Clock::now() + std::chrono::microseconds(id);
    seqs_.push_back(std::move(s));
    return seqs_.back().get();
  }
  // Runs a step and, like the engine, appends a sampled token to every chunk that needs one.
  StepPlan step() {
    StepPlan p = sched_->schedule();
    sched_->complete(p);
    for (auto& c : p.chunks) {
      if (c.needs_sample) c.seq->tokens.push_back(7);
    }
    return p;
  }
  static std::vector<std::pair<RequestId, int>> shape(const StepPlan& p) {
    std::vector<std::pair<RequestId, int>> out;
    for (const auto& c : p.chunks) out.emplace_back(c.seq->id, c.n_new);
    return out;
  }
  using Shape = std::vector<std::pair<RequestId, int>>;

  std::unique_ptr<kv::KVCacheManager> kv_;
  std::unique_ptr<Scheduler> sched_;
  std::vector<std::unique_ptr<Sequence>> seqs_;
};

}  // namespace kairo::engine
