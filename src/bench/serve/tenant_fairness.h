#pragma once
// Does one tenant's burst starve another's interactive traffic? `kairo bench serve --background-api-key K`: for each
// load level, the foreground (--api-key) runs alone, then again while a background tenant (its own key) sends a burst
// of long prompts that starts lead_s before it. The report compares the foreground's latency in the two runs; the
// headline is its p99 time to first token with the burst over its p99 alone.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/serve/sweep.h"

namespace kairo::bench::serve {

struct BackgroundLoad {
  std::string api_key;
  int n_requests = 64;      // sent at once (closed loop at concurrency n_requests)
  int input_tokens = 1024;  // words (~tokens) per prompt
  int output_tokens = 16;
  double lead_s = 2;        // the foreground starts this long after the burst
};

struct FairnessLevel {
  LevelMetrics alone;       // the foreground by itself
  LevelMetrics shared;      // the foreground during the burst
  LevelMetrics background;  // the burst
  double p99_ttft_ratio() const { return alone.ttft_ms.p99 > 0 ? shared.ttft_ms.p99 / alone.ttft_ms.p99 : 0; }
};

Result<std::vector<FairnessLevel>> run_fairness(const SweepOptions& options, const BackgroundLoad& background);

std::string fairness_markdown(const std::vector<FairnessLevel>& levels, const BackgroundLoad& background);
nlohmann::json fairness_json(const std::vector<FairnessLevel>& levels, const BackgroundLoad& background,
                             const nlohmann::json& config);

}  // namespace kairo::bench::serve
