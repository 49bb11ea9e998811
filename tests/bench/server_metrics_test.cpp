#include "bench/serve/server_metrics.h"

#include <gtest/gtest.h>

namespace kairo::bench::serve {
namespace {

const char* kScrape = R"(# HELP kairo:time_to_first_token_seconds Time to first token.
# TYPE kairo:time_to_first_token_seconds histogram
kairo:time_to_first_token_seconds_bucket{model_name="m",le="0.1"} 1
kairo:time_to_first_token_seconds_sum{model_name="m"} 1.5
kairo:time_to_first_token_seconds_count{model_name="m"} 3
kairo:inter_token_latency_seconds_sum{model_name="m"} 0.5
kairo:inter_token_latency_seconds_count{model_name="m"} 20
kairo:e2e_request_latency_seconds_sum{model_name="m"} 6
kairo:e2e_request_latency_seconds_count{model_name="m"} 3
kairo:generation_tokens_total{model_name="m"} 63
kairo:num_requests_running{model_name="m"} 0
kairo:spec_decode_num_drafts_total{model_name="m"} 10
kairo:spec_decode_num_draft_tokens_total{model_name="m"} 40
kairo:spec_decode_num_accepted_tokens_total{model_name="m"} 20
kairo:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",position="0"} 8
)";

TEST(ServerMetrics, ParsesVllmNamesUnderAnyPrefix) {
  const ServerCounters c = parse_server_metrics(kScrape);
  EXPECT_DOUBLE_EQ(c.spec_drafts, 10);
  EXPECT_DOUBLE_EQ(c.spec_draft_tokens, 40);
  EXPECT_DOUBLE_EQ(c.spec_accepted_tokens, 20);  // not the per-position counter
  EXPECT_TRUE(c.available);
  EXPECT_DOUBLE_EQ(c.ttft_sum, 1.5);
  EXPECT_DOUBLE_EQ(c.ttft_count, 3);
  EXPECT_DOUBLE_EQ(c.itl_count, 20);
  EXPECT_DOUBLE_EQ(c.e2e_sum, 6);
  EXPECT_DOUBLE_EQ(c.generation_tokens, 63);
  const ServerCounters v = parse_server_metrics("vllm:time_to_first_token_seconds_sum 2\n"
                                                "vllm:e2e_request_latency_seconds_sum{a=\"b c\"} 4\n"
                                                "vllm:e2e_request_latency_seconds_count 2\n");
  EXPECT_TRUE(v.available);
  EXPECT_DOUBLE_EQ(v.ttft_sum, 2);
  EXPECT_DOUBLE_EQ(v.e2e_sum, 4);
}

TEST(ServerMetrics, OtherMetricsAndGarbageAreNotAServerView) {
  EXPECT_FALSE(parse_server_metrics("").available);
  EXPECT_FALSE(parse_server_metrics("llamacpp:prompt_tokens_total 5\nnot a metric line\n{}\n").available);
  // a name that only ends like ours, without a prefix separator, does not count
  EXPECT_FALSE(parse_server_metrics("xtime_to_first_token_seconds_sum 1\nxe2e_request_latency_seconds_sum 1\n").available);
}

TEST(ServerMetrics, ViewIsTheMeanOverTheRequestsBetweenScrapes) {
  const ServerCounters before = parse_server_metrics(kScrape);
  ServerCounters after = before;
  after.ttft_sum += 0.9;  // 3 more requests: 300 ms each
  after.ttft_count += 3;
  after.itl_sum += 1.0;   // 50 more gaps: 20 ms each
  after.itl_count += 50;
  after.e2e_sum += 4.5;   // 1.5 s each
  after.e2e_count += 3;
  after.generation_tokens += 150;
  const ServerView v = server_view(before, after);
  ASSERT_TRUE(v.available);
  EXPECT_DOUBLE_EQ(v.n_requests, 3);
  EXPECT_NEAR(v.mean_ttft_ms, 300, 1e-9);
  EXPECT_NEAR(v.mean_itl_ms, 20, 1e-9);
  EXPECT_NEAR(v.mean_e2e_ms, 1500, 1e-9);
  EXPECT_DOUBLE_EQ(v.generation_tokens, 150);
  EXPECT_EQ(v.spec_mean_accepted_length, 0);  // nothing proposed in between
  after.spec_drafts += 20;                    // 20 verifications, 60 tokens proposed, 30 accepted
  after.spec_draft_tokens += 60;
  after.spec_accepted_tokens += 30;
  const ServerView spec = server_view(before, after);
  EXPECT_DOUBLE_EQ(spec.spec_acceptance_rate, 0.5);
  EXPECT_DOUBLE_EQ(spec.spec_mean_accepted_length, 2.5);
  EXPECT_FALSE(server_view(before, before).available);             // nothing finished in between
  EXPECT_FALSE(server_view(ServerCounters{}, after).available);    // the server had no metrics before
}

}  // namespace
}  // namespace kairo::bench::serve
