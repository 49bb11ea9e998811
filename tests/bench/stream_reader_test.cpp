// StreamReader turns SSE events into timings; times are injected, so the checks are exact.
#include <gtest/gtest.h>

#include "bench/serve/openai_request.h"

namespace kairo::bench::serve {
namespace {

using std::chrono::milliseconds;

TEST(StreamReader, TimingsFromTextChunksAndTokensFromUsage) {
  RequestRecord rec;
  const Clock::time_point t0{};
  StreamReader r(rec, t0);
  r.on_event(R"({"choices":[{"delta":{"role":"assistant"}}]})", t0 + milliseconds(10));  // no text: not a token
  r.on_event(R"({"choices":[{"delta":{"content":"Hel"}}]})", t0 + milliseconds(100));
  r.on_event(R"({"choices":[{"delta":{"content":"lo"}}]})", t0 + milliseconds(130));
  r.on_event(R"({"choices":[{"delta":{"content":"!"}}]})", t0 + milliseconds(190));
  r.on_event(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4}})", t0 + milliseconds(191));
  r.on_event("[DONE]", t0 + milliseconds(192));
  r.finish(200, "", t0 + milliseconds(200));
  EXPECT_TRUE(rec.ok) << rec.error;
  EXPECT_EQ(rec.text, "Hello!");
  EXPECT_EQ(rec.n_chunks, 3);
  EXPECT_EQ(rec.output_tokens, 4);  // usage wins over the chunk count
  EXPECT_EQ(rec.prompt_tokens, 12);
  EXPECT_NEAR(rec.ttft_s, 0.100, 1e-12);
  EXPECT_NEAR(rec.e2e_s, 0.200, 1e-12);
  ASSERT_EQ(rec.itl_s.size(), 2u);
  EXPECT_NEAR(rec.itl_s[0], 0.030, 1e-12);
  EXPECT_NEAR(rec.itl_s[1], 0.060, 1e-12);
  EXPECT_NEAR(rec.tpot_s(), 0.100 / 3, 1e-12);
}

TEST(StreamReader, CompletionsTextAndChunkCountWithoutUsage) {
  RequestRecord rec;
  const Clock::time_point t0{};
  StreamReader r(rec, t0);
  r.on_event(R"({"choices":[{"text":"a"}]})", t0 + milliseconds(5));
  r.on_event(R"({"choices":[{"text":"b"}]})", t0 + milliseconds(7));
  r.finish(200, "", t0 + milliseconds(8));
  EXPECT_TRUE(rec.ok);
  EXPECT_EQ(rec.output_tokens, 2);
  EXPECT_EQ(rec.prompt_tokens, -1);
}

TEST(StreamReader, ErrorsAreRecordedNotThrown) {
  {
    RequestRecord rec;
    StreamReader r(rec, Clock::time_point{});
    r.finish(400, R"({"error":{"message":"prompt too long","type":"invalid_request_error"}})", Clock::time_point{});
    EXPECT_FALSE(rec.ok);
    EXPECT_EQ(rec.error, "HTTP 400: prompt too long");
  }
  {
    RequestRecord rec;
    StreamReader r(rec, Clock::time_point{});
    r.on_event(R"({"choices":[{"text":"a"}]})", Clock::time_point{});
    r.on_event(R"({"error":{"message":"engine died"}})", Clock::time_point{});
    r.finish(200, "", Clock::time_point{});
    EXPECT_FALSE(rec.ok);
    EXPECT_EQ(rec.error, "error event: engine died");
  }
  {
    RequestRecord rec;
    StreamReader r(rec, Clock::time_point{});
    r.on_event("{not json", Clock::time_point{});
    r.finish(200, "", Clock::time_point{});
    EXPECT_FALSE(rec.ok);
    EXPECT_EQ(rec.error, "unparseable event: \"{not json\"");
  }
  {
    RequestRecord rec;
    StreamReader r(rec, Clock::time_point{});
    r.finish(200, "", Clock::time_point{});
    EXPECT_EQ(rec.error, "the response carried no generated tokens");
  }
}

// A token whose text the server holds back (e.g. half of a UTF-8 character) arrives as a chunk with empty text: it
// is a token event (TTFT, ITL) without text; a final chunk that only carries the finish reason is not.
TEST(StreamReader, EmptyTextChunksAreTokensButFinishOnlyChunksAreNot) {
  RequestRecord rec;
  const Clock::time_point t0{};
  StreamReader r(rec, t0);
  r.on_event(R"({"choices":[{"text":"","finish_reason":null}]})", t0 + milliseconds(30));
  r.on_event(R"({"choices":[{"text":"\u00e9","finish_reason":null}]})", t0 + milliseconds(40));
  r.on_event(R"({"choices":[{"text":"","finish_reason":"length"}]})", t0 + milliseconds(45));
  r.on_event(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}})", t0 + milliseconds(46));
  r.on_event("[DONE]", t0 + milliseconds(46));
  r.finish(200, "", t0 + milliseconds(47));
  EXPECT_TRUE(rec.ok) << rec.error;
  EXPECT_EQ(rec.n_chunks, 2);
  EXPECT_NEAR(rec.ttft_s, 0.030, 1e-12);
  ASSERT_EQ(rec.itl_s.size(), 1u);
  EXPECT_NEAR(rec.itl_s[0], 0.010, 1e-12);
  EXPECT_EQ(rec.text, "\xc3\xa9");
  EXPECT_EQ(rec.output_tokens, 2);
}

// Generated tokens that never showed as chunks (all held back) still make a successful request: the usage counts
// them, and the first token is taken as seen at the end.
TEST(StreamReader, TokensOnlyInUsageAreSeenAtTheEnd) {
  RequestRecord rec;
  const Clock::time_point t0{};
  StreamReader r(rec, t0);
  r.on_event(R"({"choices":[{"text":"","finish_reason":"length"}]})", t0 + milliseconds(45));
  r.on_event(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})", t0 + milliseconds(46));
  r.on_event("[DONE]", t0 + milliseconds(46));
  r.finish(200, "", t0 + milliseconds(50));
  EXPECT_TRUE(rec.ok) << rec.error;
  EXPECT_EQ(rec.output_tokens, 4);
  EXPECT_NEAR(rec.ttft_s, 0.050, 1e-12);
}

TEST(StreamReader, NonStreamedJsonIsOneChunk) {
  RequestRecord rec;
  const Clock::time_point t0{};
  StreamReader r(rec, t0);
  r.finish(200, R"({"choices":[{"text":"whole answer"}],"usage":{"prompt_tokens":3,"completion_tokens":2}})",
           t0 + milliseconds(50));
  EXPECT_TRUE(rec.ok);
  EXPECT_EQ(rec.text, "whole answer");
  EXPECT_EQ(rec.output_tokens, 2);
  EXPECT_NEAR(rec.ttft_s, 0.05, 1e-12);
}

}  // namespace
}  // namespace kairo::bench::serve
