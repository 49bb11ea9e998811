// The load generator against a fake OpenAI server streaming a known number of chunks with known delays: the counts
// must be exact, the latencies at least the server's sleeps (upper bounds are loose: CI machines are busy).
#include <gtest/gtest.h>

#include "bench/serve/report.h"
#include "bench/serve/sweep.h"
#include "fake_openai_server.h"

namespace kairo::bench::serve {
namespace {

using testing::FakeOpenAiServer;
using testing::FakeServerOptions;

SweepOptions options_for(const FakeOpenAiServer& server, int output_tokens, int n_requests) {
  SweepOptions o;
  o.client.url = parse_url(server.url()).value();
  o.client.model = "fake-model";
  o.client.timeout_s = 30;
  o.workload.input_tokens = 16;
  o.workload.output_tokens = output_tokens;
  o.n_requests = n_requests;
  return o;
}

void expect_records(const LevelRun& run, int n, int tokens, double first_delay_s, double gap_s) {
  ASSERT_EQ(run.records.size(), static_cast<size_t>(n));
  for (const auto& r : run.records) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.n_chunks, tokens);
    EXPECT_EQ(r.output_tokens, tokens);
    EXPECT_EQ(r.prompt_tokens, 7);
    EXPECT_EQ(r.itl_s.size(), static_cast<size_t>(tokens - 1));
    EXPECT_EQ(r.text.substr(0, 10), "tok0 tok1 ");
    EXPECT_GE(r.ttft_s, first_delay_s);
    EXPECT_LT(r.ttft_s, first_delay_s + 5.0);
    // The server sleeps before every chunk, so the stream cannot end sooner; gaps between chunks as read can be
    // shorter than as sent (a descheduled client reads two at once), but they add up to the last chunk's time.
    EXPECT_GE(r.e2e_s, first_delay_s + (tokens - 1) * gap_s);
    double last_chunk = r.ttft_s;
    for (double g : r.itl_s) last_chunk += g;
    EXPECT_LE(last_chunk, r.e2e_s + 1e-9);
    EXPECT_LT(r.e2e_s, first_delay_s + (tokens - 1) * gap_s + 5.0);
  }
}

TEST(BenchServe, ClosedLoopSweepCountsAndLatencies) {
  FakeServerOptions fo;
  fo.first_delay = std::chrono::milliseconds(30);
  fo.gap = std::chrono::milliseconds(4);
  FakeOpenAiServer server(fo);
  SweepOptions o = options_for(server, 5, 6);
  o.levels = {{false, 1}, {false, 3}};
  o.slo.ttft_ms = 60000;
  auto result = run_sweep(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->levels.size(), 2u);
  for (const auto& run : result->runs) expect_records(run, 6, 5, 0.030, 0.004);
  // The fake server counts a request until its handler returns, a moment after the client has read the last byte
  // and may already have started its next request: allow that one overlap, never more.
  EXPECT_LE(server.max_in_flight(), 4);
  const auto& m = result->levels[1];
  EXPECT_EQ(m.label, "concurrency 3");
  EXPECT_EQ(m.n_ok, 6);
  EXPECT_EQ(m.output_tokens, 30);
  EXPECT_EQ(m.prompt_tokens, 42);
  EXPECT_EQ(m.itl_ms.n, 24);
  EXPECT_EQ(m.tpot_ms.n, 6);
  EXPECT_GE(m.ttft_ms.p50, 30.0);
  EXPECT_EQ(m.n_good, 6);
  EXPECT_GT(m.output_throughput, 0);
  // The server's own /metrics, read before and after the level: the 6 requests of this level, 10 ms TTFT each.
  ASSERT_TRUE(m.server.available);
  EXPECT_DOUBLE_EQ(m.server.n_requests, 6);
  EXPECT_NEAR(m.server.mean_ttft_ms, 10, 1e-6);
  EXPECT_NEAR(m.server.mean_e2e_ms, 20, 1e-6);
  EXPECT_NE(markdown_report(result->levels, Slo{}).find("the server's own /metrics"), std::string::npos);
  // 1 check request + 2 levels × 6; every one a streamed completion with the workload's fields.
  const auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 13u);
  for (size_t i = 1; i < bodies.size(); ++i) {
    EXPECT_EQ(bodies[i]["max_tokens"], 5);
    EXPECT_EQ(bodies[i]["stream"], true);
    EXPECT_EQ(bodies[i]["ignore_eos"], true);
    EXPECT_EQ(bodies[i]["model"], "fake-model");
  }
  for (const auto& t : server.targets()) {
    if (t != "/metrics") {
      EXPECT_EQ(t, "/v1/completions");
    }
  }
}

TEST(BenchServe, OpenLoopPoissonWithCloseDelimitedBodies) {
  FakeServerOptions fo;
  fo.first_delay = std::chrono::milliseconds(10);
  fo.gap = std::chrono::milliseconds(2);
  fo.chunked = false;
  FakeOpenAiServer server(fo);
  SweepOptions o = options_for(server, 3, 8);
  o.levels = {{true, 200}};
  auto result = run_sweep(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const auto& run = result->runs[0];
  expect_records(run, 8, 3, 0.010, 0.002);
  EXPECT_EQ(result->levels[0].label, "rate 200/s");
  EXPECT_EQ(result->levels[0].n_ok, 8);
  for (size_t i = 1; i < run.records.size(); ++i) EXPECT_GE(run.records[i].start_s, run.records[i - 1].start_s);
}

TEST(BenchServe, MultiTurnFeedsRepliesBack) {
  FakeServerOptions fo;
  fo.first_delay = std::chrono::milliseconds(5);
  fo.gap = std::chrono::milliseconds(1);
  FakeOpenAiServer server(fo);
  SweepOptions o = options_for(server, 2, 6);
  o.workload.kind = WorkloadKind::MultiTurn;
  o.workload.turns = 3;
  o.workload.prefix_tokens = 10;
  o.levels = {{false, 2}};
  auto result = run_sweep(o);
  ASSERT_TRUE(result.ok()) << result.error().message;
  expect_records(result->runs[0], 6, 2, 0.005, 0.001);
  const auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 7u);  // check request + 2 conversations × 3 turns
  std::vector<size_t> sizes;
  for (size_t i = 1; i < bodies.size(); ++i) {
    const auto& msgs = bodies[i]["messages"];
    sizes.push_back(msgs.size());
    for (size_t k = 2; k < msgs.size(); k += 2) EXPECT_EQ(msgs[k]["content"], "tok0 tok1 ");  // the real reply
  }
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 4, 4, 6, 6}));
  for (const auto& t : server.targets()) {
    if (t != "/metrics") {
      EXPECT_EQ(t, "/v1/chat/completions");
    }
  }
}

TEST(BenchServe, ServerErrorsStopTheSweepWithTheirMessage) {
  FakeServerOptions fo;
  fo.fail_status = 400;
  FakeOpenAiServer server(fo);
  SweepOptions o = options_for(server, 2, 4);
  o.levels = {{false, 1}};
  auto result = run_sweep(o);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "the check request to http://127.0.0.1:" + std::to_string(server.port()) +
                " failed: HTTP 400: fake failure");
}

TEST(BenchServe, UnreachableServerSaysSo) {
  int port = 0;
  {
    FakeOpenAiServer gone(FakeServerOptions{});
    port = gone.port();
  }  // closed: nothing listens there now
  SweepOptions o;
  o.client.url = parse_url("http://127.0.0.1:" + std::to_string(port)).value();
  o.client.timeout_s = 5;
  o.levels = {{false, 1}};
  auto result = run_sweep(o);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("connect"), std::string::npos) << result.error().message;
  EXPECT_NE(result.error().message.find("is the server running at --url?"), std::string::npos);
}

TEST(BenchServe, DiscoversTheModelName) {
  FakeOpenAiServer server(FakeServerOptions{});
  auto name = discover_model(parse_url(server.url()).value(), "", 5);
  ASSERT_TRUE(name.ok()) << name.error().message;
  EXPECT_EQ(*name, "fake-model");
}

}  // namespace
}  // namespace kairo::bench::serve
