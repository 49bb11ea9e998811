#include "bench/serve/metrics.h"

#include <gtest/gtest.h>

#include "bench/serve/report.h"
#include "bench/serve/svg_plot.h"

namespace kairo::bench::serve {
namespace {

TEST(Percentile, MatchesNumpyLinearInterpolation) {
  const std::vector<double> v = {1, 2, 3, 4, 10};
  // numpy.percentile([1,2,3,4,10], q): 50 -> 3, 90 -> 7.6, 99 -> 9.76, 0 -> 1, 100 -> 10
  EXPECT_DOUBLE_EQ(percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 7.6);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 9.76);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 10);
  EXPECT_DOUBLE_EQ(percentile({5}, 99), 5);
}

TEST(Summarize, UnsortedInput) {
  const Distribution d = summarize({10, 1, 4, 3, 2});
  EXPECT_EQ(d.n, 5);
  EXPECT_DOUBLE_EQ(d.mean, 4);
  EXPECT_DOUBLE_EQ(d.p50, 3);
  EXPECT_DOUBLE_EQ(d.max, 10);
  EXPECT_EQ(summarize({}).n, 0);
}

RequestRecord record(double start, double ttft, double e2e, int out, std::vector<double> itl, int prompt = 10) {
  RequestRecord r;
  r.ok = true;
  r.start_s = start;
  r.ttft_s = ttft;
  r.e2e_s = e2e;
  r.output_tokens = out;
  r.n_chunks = out;
  r.itl_s = std::move(itl);
  r.prompt_tokens = prompt;
  return r;
}

TEST(ComputeMetrics, ThroughputLatencyAndGoodput) {
  LevelRun run;
  run.level = {false, 2};
  run.duration_s = 2.0;
  run.records.push_back(record(0, 0.1, 0.5, 5, {0.1, 0.1, 0.1, 0.1}));  // TPOT 0.1
  run.records.push_back(record(0, 0.3, 1.1, 5, {0.2, 0.2, 0.2, 0.2}));  // TPOT 0.2
  run.records.push_back(record(1, 0.2, 0.2, 1, {}));                    // one token: no TPOT
  RequestRecord failed;
  failed.error = "HTTP 500: boom";
  run.records.push_back(failed);
  const Slo slo{250, 150};
  const LevelMetrics m = compute_metrics(run, slo);
  EXPECT_EQ(m.label, "concurrency 2");
  EXPECT_EQ(m.n_requests, 4);
  EXPECT_EQ(m.n_ok, 3);
  EXPECT_EQ(m.n_failed, 1);
  EXPECT_EQ(m.first_error, "HTTP 500: boom");
  EXPECT_EQ(m.output_tokens, 11);
  EXPECT_EQ(m.prompt_tokens, 30);
  EXPECT_DOUBLE_EQ(m.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(m.output_throughput, 5.5);
  EXPECT_DOUBLE_EQ(m.total_throughput, 20.5);
  EXPECT_EQ(m.ttft_ms.n, 3);
  EXPECT_NEAR(m.ttft_ms.mean, 200, 1e-9);
  EXPECT_EQ(m.tpot_ms.n, 2);
  EXPECT_NEAR(m.tpot_ms.mean, 150, 1e-9);
  EXPECT_EQ(m.itl_ms.n, 8);
  EXPECT_NEAR(m.itl_ms.p50, 150, 1e-9);
  // Goodput: request 1 (TTFT 100, TPOT 100) and 3 (TTFT 200, no TPOT) meet TTFT<=250 and TPOT<=150; 2 does not.
  EXPECT_EQ(m.n_good, 2);
  EXPECT_DOUBLE_EQ(m.goodput, 1.0);
}

TEST(ComputeMetrics, UnreportedUsageFallsBackToWords) {
  LevelRun run;
  run.level = {true, 4};
  run.duration_s = 1.0;
  RequestRecord r = record(0, 0.1, 0.2, 2, {0.1}, -1);
  r.prompt_words = 12;
  run.records.push_back(r);
  const LevelMetrics m = compute_metrics(run, Slo{});
  EXPECT_EQ(m.label, "rate 4/s");
  EXPECT_EQ(m.prompt_tokens, -1);
  EXPECT_DOUBLE_EQ(m.mean_prompt_tokens, 12);
  EXPECT_DOUBLE_EQ(m.total_throughput, 0);
  EXPECT_DOUBLE_EQ(m.goodput, 0);
}

TEST(Report, MarkdownAndJsonCarryEveryLevel) {
  LevelRun run;
  run.level = {false, 4};
  run.duration_s = 1.0;
  run.records.push_back(record(0, 0.1, 0.5, 5, {0.1, 0.1, 0.1, 0.1}));
  const LevelMetrics m = compute_metrics(run, Slo{});
  const std::string md = markdown_report({m, m}, Slo{});
  EXPECT_NE(md.find("| concurrency 4 | 1/0 | 1.0 | 1.00 | 5.0 | 15.0 | 10/5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| concurrency 4 | TTFT | 100 | 100 | 100 | 100 | 100 |"), std::string::npos) << md;
  const auto j = json_report({m}, Slo{}, {{"url", "http://x"}});
  EXPECT_EQ(j["levels"].size(), 1u);
  EXPECT_EQ(j["levels"][0]["concurrency"], 4);
  EXPECT_EQ(j["levels"][0]["ttft_ms"]["n"], 1);
  EXPECT_DOUBLE_EQ(j["levels"][0]["output_throughput"].get<double>(), 5.0);
  EXPECT_EQ(j["config"]["url"], "http://x");
}

TEST(SvgPlot, TicksAndOnePointPerLevelPerPanel) {
  EXPECT_EQ(nice_ticks(0, 47, 5), (std::vector<double>{0, 10, 20, 30, 40, 50}));
  EXPECT_EQ(nice_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(nice_ticks(0, 900, 4), (std::vector<double>{0, 500, 1000}));
  LevelMetrics a, b, c;
  a.label = "concurrency 1";
  a.output_throughput = 20;
  a.ttft_ms.p99 = 100;
  a.tpot_ms.p99 = 40;
  b = a;
  b.label = "concurrency 4";
  b.output_throughput = 60;
  b.ttft_ms.p99 = 300;
  c = a;
  c.label = "concurrency 16 <&>";
  c.output_throughput = 80;
  c.ttft_ms.p99 = 2000;
  const std::string svg = svg_plot({a, b, c}, "title & more");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  size_t circles = 0;
  for (size_t pos = 0; (pos = svg.find("<circle", pos)) != std::string::npos; ++pos) ++circles;
  EXPECT_EQ(circles, 6u);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);  // labels are escaped
  EXPECT_NE(svg.find("concurrency 16 &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("title &amp; more"), std::string::npos);
}

}  // namespace
}  // namespace kairo::bench::serve
