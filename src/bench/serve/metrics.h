#pragma once
// The serving metrics, as vLLM's and SGLang's benchmarks define them:
//   TTFT  time to first token (first text chunk), per request
//   TPOT  time per output token after the first: (E2E - TTFT) / (output tokens - 1), per request with >1 token
//   ITL   inter-token latency: every gap between consecutive text chunks, pooled over requests
//   E2E   end-to-end latency, per request
// Percentiles interpolate linearly between order statistics (numpy's default). Goodput counts the requests per
// second that met every SLO given.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/serve/load_generator.h"
#include "bench/serve/server_metrics.h"

namespace kairo::bench::serve {

struct Distribution {
  int n = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// q in [0, 100]; `sorted` ascending and non-empty.
double percentile(const std::vector<double>& sorted, double q);
Distribution summarize(std::vector<double> values);

struct Slo {
  double ttft_ms = 0;  // 0 = no bound
  double tpot_ms = 0;
  bool any() const { return ttft_ms > 0 || tpot_ms > 0; }
};

struct LevelMetrics {
  std::string label;
  bool open_loop = false;
  double load = 0;                 // concurrency or request rate
  int n_requests = 0, n_ok = 0, n_failed = 0;
  std::string first_error;
  double duration_s = 0;
  double request_throughput = 0;   // successful requests per second
  double output_throughput = 0;    // output tokens per second
  double total_throughput = 0;     // prompt + output tokens per second (0 when the server reports no usage)
  int64_t output_tokens = 0;
  int64_t prompt_tokens = -1;      // -1 when the server did not report usage
  double mean_prompt_tokens = 0;   // reported, else words sent
  double mean_output_tokens = 0;
  Distribution ttft_ms, tpot_ms, itl_ms, e2e_ms;
  int n_good = 0;                  // met the SLO
  double goodput = 0;              // good requests per second (0 without an SLO)
  ServerView server;               // the server's /metrics over the level, where it has them
};

LevelMetrics compute_metrics(const LevelRun& run, const Slo& slo);

}  // namespace kairo::bench::serve
