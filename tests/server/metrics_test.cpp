// /metrics: vLLM's names under the configured prefix, counters that follow the requests served, histograms in the
// Prometheus exposition format, and the access-log line format.
#include "server/access_log.h"
#include "server/metrics.h"
#include "server_fixture.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

class MetricsTest : public ServerTest {
 protected:
  void SetUp() override { start(); }
};

TEST_F(MetricsTest, CountersFollowTheRequestsServed) {
  const std::vector<int32_t> ids = {1, 300, 301};
  ASSERT_EQ(post("/v1/completions", {{"prompt", ids}, {"max_tokens", 4}}).status, 200);
  const std::string full = fake_text(ids, 6);
  ASSERT_EQ(post("/v1/completions", {{"prompt", ids}, {"max_tokens", 6}, {"stop", full.substr(full.size() - 3)}}).status,
            200);
  ASSERT_EQ(post("/v1/completions", {{"prompt", ""}}).status, 400);

  const auto r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = r.body;
  const std::string L = "{model_name=\"demo\"";
  EXPECT_TRUE(has_line(m, "kairo:num_requests_running" + L + "} 0")) << m;
  EXPECT_TRUE(has_line(m, "kairo:num_requests_waiting" + L + "} 0"));
  EXPECT_TRUE(has_line(m, "kairo:kv_cache_usage_perc" + L + "} 0"));
  EXPECT_TRUE(has_line(m, "kairo:num_preemptions_total" + L + "} 0"));
  EXPECT_TRUE(has_line(m, "kairo:prefix_cache_queries_total" + L + "} 0"));
  EXPECT_TRUE(has_line(m, "kairo:prefix_cache_hits_total" + L + "} 0"));
  EXPECT_TRUE(has_line(m, "kairo:prompt_tokens_total" + L + "} 6"));
  const int n_second = static_cast<int>(server_->metrics().generation_tokens_total()) - 4;
  EXPECT_GE(n_second, 4);
  EXPECT_TRUE(has_line(m, "kairo:generation_tokens_total" + L + "} " + std::to_string(4 + n_second)));
  EXPECT_TRUE(has_line(m, "kairo:request_success_total" + L + ",finished_reason=\"length\"} 1"));
  EXPECT_TRUE(has_line(m, "kairo:request_success_total" + L + ",finished_reason=\"stop\"} 1"));
  EXPECT_TRUE(has_line(m, "kairo:request_success_total" + L + ",finished_reason=\"abort\"} 0"));
  EXPECT_TRUE(has_line(m, "# TYPE kairo:time_to_first_token_seconds histogram"));
  EXPECT_TRUE(has_line(m, "kairo:time_to_first_token_seconds_count" + L + "} 2"));
  EXPECT_TRUE(has_line(m, "kairo:time_to_first_token_seconds_bucket" + L + ",le=\"+Inf\"} 2"));
  EXPECT_TRUE(has_line(m, "kairo:e2e_request_latency_seconds_count" + L + "} 2"));
  EXPECT_TRUE(has_line(m, "kairo:inter_token_latency_seconds_count" + L + "} " + std::to_string(3 + n_second - 1)));
  EXPECT_TRUE(has_line(m, "kairo:request_decode_time_seconds_count" + L + "} 2"));
  for (const char* name : {"request_queue_time_seconds", "request_prefill_time_seconds"}) {
    EXPECT_TRUE(has_line(m, std::string("# TYPE kairo:") + name + " histogram")) << name;
  }
  EXPECT_TRUE(has_line(m, "kairo:http_responses_total" + L + ",code=\"400\"} 1"));
  EXPECT_TRUE(has_line(m, "kairo:http_responses_total" + L + ",code=\"200\"} 2"));
  EXPECT_TRUE(has_line(m, "kairo:weight_read_bandwidth_gbps" + L + "} 0"));
}

TEST(MetricsPrefixTest, VllmPrefixRenamesTheVllmMetrics) {
  ServerMetrics metrics("vllm:", "m");
  const std::string text = metrics.render(engine::EngineStats{.n_running = 3, .n_waiting = 2, .kv_usage = 0.25}, 0);
  EXPECT_TRUE(has_line(text, "vllm:num_requests_running{model_name=\"m\"} 3"));
  EXPECT_TRUE(has_line(text, "vllm:num_requests_waiting{model_name=\"m\"} 2"));
  EXPECT_TRUE(has_line(text, "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.25"));
  EXPECT_EQ(text.find("kairo:num_requests_running"), std::string::npos);
  EXPECT_EQ(text.find("kairo:weight_read_bandwidth_perc"), std::string::npos);  // no device ceiling given
  const std::string with_ceiling = metrics.render(engine::EngineStats{.weight_read_gbps = 50}, 200);
  EXPECT_TRUE(has_line(with_ceiling, "kairo:weight_read_bandwidth_perc{model_name=\"m\"} 0.25"));
  EXPECT_EQ(text.find("window_kv_cache_usage_perc"), std::string::npos);  // no sliding-window layers
  const std::string windowed =
      metrics.render(engine::EngineStats{.n_window_kv_blocks_total = 40, .n_window_kv_blocks_used = 10}, 0);
  EXPECT_TRUE(has_line(windowed, "kairo:window_kv_cache_usage_perc{model_name=\"m\"} 0.25"));
}

TEST(MetricsPrefixTest, SpeculativeDecodingCountersUseVllmNames) {
  ServerMetrics metrics("vllm:", "m");
  const std::string text = metrics.render(engine::EngineStats{.spec_num_drafts = 10,
                                                              .spec_num_draft_tokens = 40,
                                                              .spec_num_accepted_tokens = 25,
                                                              .spec_num_accepted_tokens_per_pos = {9, 8, 5, 3}},
                                          0);
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_drafts_total{model_name=\"m\"} 10"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_draft_tokens_total{model_name=\"m\"} 40"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 25"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"0\"} 9"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"3\"} 3"));
}

TEST(HistogramTest, BucketsAreCumulativeWithInclusiveUpperBounds) {
  Histogram h({0.1, 1.0, 10.0});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.observe(v);
  EXPECT_EQ(h.cumulative(), (std::vector<uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(h.count(), 5u);
  EXPECT_DOUBLE_EQ(h.sum(), 55.65);
}

TEST(AccessLogTest, OneJsonObjectPerLine) {
  AccessLogEntry e;
  e.request_id = "abc";
  e.remote = "127.0.0.1:5000";
  e.method = "POST";
  e.path = "/v1/completions";
  e.status = 400;
  e.duration_ms = 1.5;
  e.error = "bad \"thing\"\n";
  const std::string line = format_access_log(e, 1700000000123);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(line), (json{{"ts_ms", 1700000000123},
                                     {"request_id", "abc"},
                                     {"remote", "127.0.0.1:5000"},
                                     {"method", "POST"},
                                     {"path", "/v1/completions"},
                                     {"status", 400},
                                     {"duration_ms", 1.5},
                                     {"error", "bad \"thing\"\n"}}));
  e.status = 200;
  e.error.clear();
  e.stream = true;
  e.prompt_tokens = 7;
  e.completion_tokens = 9;
  const json j = json::parse(format_access_log(e, 1));
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["prompt_tokens"], 7);
  EXPECT_EQ(j["completion_tokens"], 9);
  EXPECT_FALSE(j.contains("error"));
}

}  // namespace
}  // namespace kairo::server::testing
