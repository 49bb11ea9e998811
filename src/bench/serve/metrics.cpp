#include "bench/serve/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kairo::bench::serve {

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

Distribution summarize(std::vector<double> v) {
  Distribution d;
  d.n = static_cast<int>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  d.p50 = percentile(v, 50);
  d.p90 = percentile(v, 90);
  d.p99 = percentile(v, 99);
  d.max = v.back();
  return d;
}

LevelMetrics compute_metrics(const LevelRun& run, const Slo& slo) {
  LevelMetrics m;
  m.label = run.level.label();
  m.open_loop = run.level.open_loop;
  m.load = run.level.value;
  m.n_requests = static_cast<int>(run.records.size());
  m.duration_s = run.duration_s;
  std::vector<double> ttft, tpot, itl, e2e;
  int64_t prompt_reported = 0, prompt_any = 0;
  bool all_reported = true;
  for (const auto& r : run.records) {
    if (!r.ok) {
      m.n_failed += 1;
      if (m.first_error.empty()) m.first_error = r.error.empty() ? run.error : r.error;
      continue;
    }
    m.n_ok += 1;
    m.output_tokens += r.output_tokens;
    ttft.push_back(r.ttft_s * 1e3);
    e2e.push_back(r.e2e_s * 1e3);
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s() * 1e3);
    for (double g : r.itl_s) itl.push_back(g * 1e3);
    if (r.prompt_tokens >= 0) {
      prompt_reported += r.prompt_tokens;
      prompt_any += r.prompt_tokens;
    } else {
      all_reported = false;
      prompt_any += r.prompt_words;
    }
    bool good = true;
    if (slo.ttft_ms > 0 && r.ttft_s * 1e3 > slo.ttft_ms) good = false;
    if (slo.tpot_ms > 0 && r.tpot_s() * 1e3 > slo.tpot_ms) good = false;
    if (good) m.n_good += 1;
  }
  if (m.first_error.empty() && !run.error.empty()) m.first_error = run.error;
  if (m.n_ok > 0) {
    m.prompt_tokens = all_reported ? prompt_reported : -1;
    m.mean_prompt_tokens = static_cast<double>(prompt_any) / m.n_ok;
    m.mean_output_tokens = static_cast<double>(m.output_tokens) / m.n_ok;
  }
  if (m.duration_s > 0) {
    m.request_throughput = m.n_ok / m.duration_s;
    m.output_throughput = static_cast<double>(m.output_tokens) / m.duration_s;
    if (m.prompt_tokens >= 0) m.total_throughput = static_cast<double>(m.prompt_tokens + m.output_tokens) / m.duration_s;
    if (slo.any()) m.goodput = m.n_good / m.duration_s;
  }
  m.ttft_ms = summarize(ttft);
  m.tpot_ms = summarize(tpot);
  m.itl_ms = summarize(itl);
  m.e2e_ms = summarize(e2e);
  return m;
}

}  // namespace kairo::bench::serve
