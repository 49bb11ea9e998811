// The KV bookkeeping's own cost (Google Benchmark), without a model: block pool allocate/release, forks, and whole
// scheduler steps of a decode batch, with and without preemption. The forward pass of even a tiny model costs far
// more per step than any of this, so these are where the always-on invariant checks (core/check.h) would show.
//
//   kv_bench [--benchmark_filter=Scheduler] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "kv/block_pool.h"
#include "kv/kv_cache_manager.h"

namespace {

using kairo::engine::Scheduler;
using kairo::engine::SchedulerConfig;
using kairo::engine::Sequence;
using kairo::engine::StepPlan;
using kairo::kv::BlockId;
using kairo::kv::BlockPool;
using kairo::kv::KVCacheConfig;
using kairo::kv::KVCacheManager;

constexpr int kBlockSize = 16;

// allocate(n) then release the n blocks last-to-first, as a finished request does: 2n block operations.
void BM_PoolAllocateRelease(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  BlockPool pool(4097, kBlockSize);
  for (auto _ : state) {
    std::vector<BlockId> blocks = *pool.allocate(n, /*holder=*/1);
    std::vector<BlockId> reversed(blocks.rbegin(), blocks.rend());
    pool.release(reversed, /*holder=*/1);
    benchmark::DoNotOptimize(reversed.data());
  }
  state.SetItemsProcessed(state.iterations() * n * 2);
}
BENCHMARK(BM_PoolAllocateRelease)->Arg(16)->Arg(256);

// A request of 64 blocks forked 8 times (n = 8), then every copy freed: touch and release on shared blocks.
void BM_ForkAndFree(benchmark::State& state) {
  KVCacheManager kv(KVCacheConfig{4097, kBlockSize, true});
  std::vector<int32_t> tokens(64 * kBlockSize);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i);
  uint64_t next_id = 1;
  for (auto _ : state) {
    const uint64_t parent = next_id++;
    kv.allocate_slots(parent, tokens, static_cast<int32_t>(tokens.size()));
    for (int i = 0; i < 8; ++i) kv.fork(parent, next_id + static_cast<uint64_t>(i));
    for (int i = 0; i < 8; ++i) kv.free(next_id + static_cast<uint64_t>(i));
    kv.free(parent);
    next_id += 8;
  }
  state.SetItemsProcessed(state.iterations() * 64 * 9 * 2);
}
BENCHMARK(BM_ForkAndFree);

// n_seqs requests (prompt 128 tokens, 256 generated) run to the end through the scheduler over a KV pool of n_blocks
// usable blocks, as the engine drives it (schedule, complete, append the sampled token); items = scheduled tokens.
// With n_tenants > 1 the requests belong to that many tenants in turn (the fair-sharing path).
void run_batch(benchmark::State& state, int n_seqs, int n_blocks, int n_tenants = 1) {
  constexpr int kPrompt = 128, kGenerated = 256;
  int64_t n_tokens = 0, n_preemptions = 0;
  for (auto _ : state) {
    state.PauseTiming();
    KVCacheManager kv(KVCacheConfig{n_blocks + 1, kBlockSize, true});
    Scheduler sched(SchedulerConfig{512, 64, 256, 1, false}, kv);
    std::vector<std::unique_ptr<Sequence>> seqs;
    for (int s = 0; s < n_seqs; ++s) {
      auto seq = std::make_unique<Sequence>();
      seq->id = static_cast<uint64_t>(s + 1);
      for (int i = 0; i < kPrompt; ++i) seq->tokens.push_back(1000 * s + i);
      seq->n_prompt = kPrompt;
      if (n_tenants > 1) seq->request.tenant = "tenant-" + std::to_string(s % n_tenants);
      sched.add(seq.get());
      seqs.push_back(std::move(seq));
    }
    state.ResumeTiming();
    int n_left = n_seqs;
    while (n_left > 0) {
      StepPlan plan = sched.schedule();
      sched.complete(plan);
      n_tokens += plan.n_tokens;
      for (const auto& c : plan.chunks) {
        if (!c.needs_sample) continue;
        c.seq->tokens.push_back(7 + c.seq->n_generated());
        if (c.seq->n_generated() == kGenerated) {
          sched.remove(c.seq);
          --n_left;
        }
      }
    }
    n_preemptions += sched.n_preemptions();
  }
  state.SetItemsProcessed(n_tokens);
  state.counters["preemptions"] = benchmark::Counter(static_cast<double>(n_preemptions) / state.iterations());
}

// Every sequence fits: allocation, publication to the prefix cache, and frees.
void BM_SchedulerDecode(benchmark::State& state) { run_batch(state, static_cast<int>(state.range(0)), 4096); }
BENCHMARK(BM_SchedulerDecode)->Arg(16)->Unit(benchmark::kMillisecond);

// A pool that holds about half the batch's final size: preemption, recomputation through prefix-cache hits.
void BM_SchedulerPreempting(benchmark::State& state) {
  const int n_seqs = static_cast<int>(state.range(0));
  run_batch(state, n_seqs, n_seqs * (128 + 256) / kBlockSize / 2);
}
BENCHMARK(BM_SchedulerPreempting)->Arg(16)->Unit(benchmark::kMillisecond);

// BM_SchedulerDecode's batch split between 4 tenants: what the fair-sharing bookkeeping costs per step.
void BM_SchedulerDecodeFourTenants(benchmark::State& state) {
  run_batch(state, static_cast<int>(state.range(0)), 4096, 4);
}
BENCHMARK(BM_SchedulerDecodeFourTenants)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
