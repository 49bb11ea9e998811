#pragma once
// A hand-written SVG of a sweep: output throughput on x against p99 TTFT (left panel) and p99 TPOT (right panel)
// on y, one point per load level, joined in sweep order and labelled -- the knee where latency shoots up while
// throughput stops growing is what a person looks for.
#include <string>
#include <vector>

#include "bench/serve/metrics.h"

namespace kairo::bench::serve {

std::string svg_plot(const std::vector<LevelMetrics>& levels, const std::string& title);

// Round tick positions covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace kairo::bench::serve
