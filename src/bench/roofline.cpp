#include "bench/roofline.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>

#include "bench/roofline_kernels.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_features.h"

namespace kairo::bench {
namespace {

namespace rk = roofline_kernels;
using Clock = std::chrono::steady_clock;

std::atomic<uint64_t> g_sink{0};  // results land here so no loop is dead code

// Runs fn(thread_idx) on n threads released together; returns the wall time until the last one finished.
double run_parallel(int n, const std::function<void(int)>& fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      fn(t);
    });
  }
  while (ready.load() < n - 1) std::this_thread::yield();
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  fn(0);
  for (auto& th : threads) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// work(thread_idx, iters) on n threads at once: iters grows until a run fills about `seconds`, then the best of
// three runs gives the rate in units per second (units_per_iter per thread per iteration).
double measure_rate(int n, double seconds, double units_per_iter, const std::function<void(int, int64_t)>& work) {
  int64_t iters = 1;
  double t = 0;
  for (;;) {
    t = run_parallel(n, [&](int tid) { work(tid, iters); });
    if (t >= seconds / 4 || iters >= (int64_t{1} << 40)) break;
    iters *= t > 0 ? std::clamp<int64_t>(static_cast<int64_t>(seconds / 4 / t) + 1, 2, 64) : 64;
  }
  iters = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * (seconds / 3) / t));
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    const double tt = run_parallel(n, [&](int tid) { work(tid, iters); });
    best = std::max(best, units_per_iter * static_cast<double>(iters) * n / tt);
  }
  return best;
}

struct AlignedFree {
  void operator()(uint64_t* p) const { std::free(p); }
};

// A buffer of n 64-bit words, 2 MiB aligned (huge pages when the kernel allows), first touched by the threads
// that will read it so each slice sits on its reader's NUMA node.
std::unique_ptr<uint64_t, AlignedFree> make_buffer(size_t n_words, int n_threads) {
  constexpr size_t kAlign = size_t{2} << 20;
  const size_t bytes = (n_words * 8 + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<uint64_t*>(std::aligned_alloc(kAlign, bytes));
  if (!p) return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);
  const size_t per = n_words / n_threads;
  run_parallel(n_threads, [&](int tid) {
    const size_t end = tid == n_threads - 1 ? n_words : (tid + 1) * per;
    for (size_t i = tid * per; i < end; ++i) p[i] = i & 0xFF;
  });
  return std::unique_ptr<uint64_t, AlignedFree>(p);
}

// The plain streaming read of the path's vector width, or with prefetches.
using ReadFn = uint64_t (*)(const uint64_t* p, size_t n);
ReadFn read_kernel(bool avx512, bool prefetch) {
#if defined(__aarch64__)
  (void)avx512;
  return prefetch ? rk::read_sum_prefetch_neon : rk::read_sum_neon;
#else
  return prefetch ? (avx512 ? rk::read_sum_prefetch_avx512 : rk::read_sum_prefetch_avx2)
                  : (avx512 ? rk::read_sum_avx512 : rk::read_sum_avx2);
#endif
}

double measure_read(const uint64_t* buf, size_t n_words, int n_threads, double seconds, bool avx512, bool prefetch) {
  const ReadFn read = read_kernel(avx512, prefetch);
  const size_t per = n_words / n_threads / 32 * 32;  // each thread's slice, whole 256-byte rows
  return measure_rate(n_threads, seconds, static_cast<double>(per * 8) / 1e9, [&](int tid, int64_t reps) {
    uint64_t s = 0;
    for (int64_t r = 0; r < reps; ++r) {
      s += read(buf + tid * per, per);
    }
    g_sink.fetch_add(s, std::memory_order_relaxed);
  });
}

void add(RooflineResult& r, const char* name, const char* kernel, const char* unit, int n_threads, double value) {
  r.figures.push_back({name, kernel, unit, n_threads, value});
}

}  // namespace

RooflineResult measure_roofline(const RooflineOptions& o) {
  RooflineResult r;
  // The ceilings of the path the kernels run (KAIRO_ISA may force a lower one), not of everything the CPU has.
  const kernels::cpu::Isa isa = kernels::cpu::best_isa();
  using kernels::cpu::Isa;
  const bool x86 = isa != Isa::Neon;
  struct {
    bool avx2, avx512, amx, neon;
  } f{x86 && isa >= Isa::Avx2, x86 && isa >= Isa::Avx512, x86 && isa >= Isa::Amx, isa == Isa::Neon};
  r.n_threads = o.n_threads > 0 ? o.n_threads : ThreadPool::available_cores();
  r.buffer_bytes = o.buffer_bytes / 256 * 256;
  const std::vector<int> counts = r.n_threads > 1 ? std::vector<int>{1, r.n_threads} : std::vector<int>{1};
  const double secs = o.seconds_per_test;

  if (f.avx2 || f.avx512 || f.neon) {
    const size_t n_words = r.buffer_bytes / 8;
    auto buf = make_buffer(n_words, r.n_threads);
    if (buf) {
      for (int n : counts) {
        const char* isa = f.neon ? "neon" : f.avx512 ? "avx512" : "avx2";
        add(r, "read", isa, "GB/s", n, measure_read(buf.get(), n_words, n, secs, f.avx512, false));
        add(r, "read-prefetch", isa, "GB/s", n, measure_read(buf.get(), n_words, n, secs, f.avx512, true));
      }
    }
  }
  for (int n : counts) {
#if defined(__aarch64__)
    if (f.neon && kernels::cpu::neon_uses_dot()) {
      add(r, "int8", "neon-sdot", "TOP/s", n, measure_rate(n, secs, 12 * 16 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::int8_dot_neondot(it, 1, 1)), std::memory_order_relaxed);
          }));
    } else if (f.neon) {
      add(r, "int8", "neon", "TOP/s", n, measure_rate(n, secs, 128 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::int8_dot_neon(it, 1, 1)), std::memory_order_relaxed);
          }));
    }
#else
    if (f.avx512) {
      add(r, "int8", "avx512-vnni", "TOP/s", n,
          measure_rate(n, secs, 12 * 64 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::int8_dot_vnni(it, 1, 1)), std::memory_order_relaxed);
          }));
      if (kernels::cpu::cpu_features().avx512_bf16)  // Intel's AVX-512 CPUs before Cooper Lake lack it
        add(r, "bf16", "avx512-bf16", "TFLOP/s", n,
            measure_rate(n, secs, 12 * 32 * 2 / 1e12, [](int, int64_t it) {
              g_sink.fetch_add(static_cast<uint64_t>(rk::bf16_dot_avx512(it, 1.0f)), std::memory_order_relaxed);
            }));
    } else if (f.avx2 && kernels::cpu::avx2_uses_vnni()) {
      add(r, "int8", "avx-vnni", "TOP/s", n, measure_rate(n, secs, 12 * 32 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::int8_dot_avxvnni(it, 1, 1)), std::memory_order_relaxed);
          }));
    } else if (f.avx2) {
      add(r, "int8", "avx2", "TOP/s", n, measure_rate(n, secs, 12 * 32 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::int8_dot_avx2(it, 1, 1)), std::memory_order_relaxed);
          }));
    }
    if (f.amx && rk::amx_available()) {
      add(r, "int8", "amx", "TOP/s", n, measure_rate(n, secs, 4.0 * 16 * 16 * 64 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::amx_int8_dot(it, 1, 1)), std::memory_order_relaxed);
          }));
    }
    if (f.amx && rk::amx_bf16_available()) {
      add(r, "bf16", "amx", "TFLOP/s", n, measure_rate(n, secs, 4.0 * 16 * 16 * 32 * 2 / 1e12, [](int, int64_t it) {
            g_sink.fetch_add(static_cast<uint64_t>(rk::amx_bf16_dot(it)), std::memory_order_relaxed);
          }));
    }
#endif
  }
  for (const auto& fig : r.figures) {
    const bool all = fig.n_threads == r.n_threads;
    const bool one = fig.n_threads == 1;
    if (fig.name == "read") {
      if (all) r.read_gbs = std::max(r.read_gbs, fig.value);
      if (one) r.read_gbs_1t = std::max(r.read_gbs_1t, fig.value);
    } else if (fig.name == "read-prefetch") {
      if (all) r.read_prefetch_gbs = std::max(r.read_prefetch_gbs, fig.value);
      if (one) r.read_prefetch_gbs_1t = std::max(r.read_prefetch_gbs_1t, fig.value);
    } else if (fig.name == "int8") {
      if (all) r.int8_tops = std::max(r.int8_tops, fig.value);
      if (one) r.int8_tops_1t = std::max(r.int8_tops_1t, fig.value);
    } else if (fig.name == "bf16") {
      if (all) r.bf16_tflops = std::max(r.bf16_tflops, fig.value);
      if (one) r.bf16_tflops_1t = std::max(r.bf16_tflops_1t, fig.value);
    }
  }
  return r;
}

plan::CpuMeasurement measure_cpu(const RooflineOptions& options, uint64_t mem_available_bytes) {
  const RooflineResult r = measure_roofline(options);
  plan::CpuMeasurement m;
  m.mem_available_bytes = mem_available_bytes;
  // The planner's decode figures are upper bounds: the best read the decode kernels can get (they prefetch, and
  // pass the plain streaming read by up to ~5 %).
  m.bandwidth_gbs = std::max(r.read_gbs, r.read_prefetch_gbs);
  m.int8_tops = r.int8_tops;
  m.bf16_tflops = r.bf16_tflops;
  m.n_threads = r.n_threads;
  return m;
}

}  // namespace kairo::bench
