#pragma once
// A serving benchmark run: a check request (so a wrong URL fails in a second with a clear message), then each load
// level in turn with fresh prompts, then the metrics of every level.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/serve/load_generator.h"
#include "bench/serve/metrics.h"
#include "bench/serve/workload.h"
#include "core/result.h"

namespace kairo::bench::serve {

struct SweepOptions {
  ClientConfig client;
  WorkloadOptions workload;
  std::vector<LoadLevel> levels;
  int n_requests = 0;   // per level; 0 = max(16, 4 × concurrency) closed loop, max(16, 8 × rate) open loop
  Slo slo;
  // Called as each level's requests finish (a progress bar's feed): the level's label, requests done of its total,
  // output tokens so far, seconds since the level started. Empty: nothing is reported.
  std::function<void(const std::string& level, int done, int total, int64_t output_tokens, double elapsed_s)> progress;
};

struct SweepResult {
  std::vector<LevelRun> runs;
  std::vector<LevelMetrics> levels;
};

int requests_for_level(const SweepOptions& options, const LoadLevel& level);

// One request, alone, with a short output: is the server there, does it take the key, and does it stream?
Status check_server(const SweepOptions& options);

Result<SweepResult> run_sweep(const SweepOptions& options);

// The first model id of GET /v1/models (sent with the API key, when there is one), or an error (callers fall back
// to a name of their own).
Result<std::string> discover_model(const Url& url, const std::string& api_key, double timeout_s);

}  // namespace kairo::bench::serve
