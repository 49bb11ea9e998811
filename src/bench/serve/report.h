#pragma once
// Printing the results of a sweep: markdown tables for people, JSON for scripts.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/serve/metrics.h"

namespace kairo::bench::serve {

// A throughput table (one row per load level) and a latency table (mean/p50/p90/p99 of TTFT, TPOT, ITL, E2E).
std::string markdown_report(const std::vector<LevelMetrics>& levels, const Slo& slo);

nlohmann::json level_json(const LevelMetrics& m);
// {"config": config, "slo": {...}, "levels": [...]}
nlohmann::json json_report(const std::vector<LevelMetrics>& levels, const Slo& slo, const nlohmann::json& config);

}  // namespace kairo::bench::serve
