#pragma once
// One OpenAI-style streaming request, timed: the body for /v1/completions or /v1/chat/completions, and the reading
// of its SSE stream into a RequestRecord. Every chunk that carries text counts as a token arrival (inter-token
// latency is the gap between such chunks); the output token count comes from `usage` when the server reports it
// (stream_options.include_usage), else from the number of text chunks.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/serve/http_client.h"
#include "bench/serve/workload.h"

namespace kairo::bench::serve {

using Clock = std::chrono::steady_clock;

struct ClientConfig {
  Url url;
  std::string model = "default";
  std::string api_key;          // sent as "Authorization: Bearer ..." when set
  double timeout_s = 600;
  bool ignore_eos = true;       // generate exactly max_tokens (vLLM, llama-server and kairo honour it)
  double temperature = 0.0;
};

struct RequestRecord {
  bool ok = false;
  std::string error;
  double start_s = 0;           // when it was sent, seconds since the level began
  double ttft_s = 0;            // time to the first text chunk
  double e2e_s = 0;             // time to the end of the stream
  std::vector<double> itl_s;    // gaps between consecutive text chunks
  int n_chunks = 0;             // text chunks received
  int output_tokens = 0;        // usage.completion_tokens, else n_chunks
  int prompt_tokens = -1;       // usage.prompt_tokens; -1 when not reported
  int prompt_words = 0;         // words the client sent (system + history + turn)
  int max_tokens = 0;
  std::string text;             // the generated text (multi-turn feeds it back)

  // Time per output token after the first: (e2e - ttft) / (output_tokens - 1); 0 with fewer than 2 tokens.
  double tpot_s() const { return output_tokens > 1 ? (e2e_s - ttft_s) / (output_tokens - 1) : 0.0; }
};

// The request body for turn `turn_idx` of the session; `replies` holds the assistant's replies to earlier turns.
nlohmann::json build_request_body(const ClientConfig& config, const Session& session, int turn_idx,
                                  const std::vector<std::string>& replies);

// Reads the events of one streamed response into a record (separate from the socket so it can be tested).
class StreamReader {
 public:
  StreamReader(RequestRecord& record, Clock::time_point sent) : rec_(record), sent_(sent) {}
  // One SSE event's data, received at `now`.
  void on_event(const std::string& data, Clock::time_point now);
  // The stream ended at `now`. `status` is the HTTP status; `raw_body` the whole body when no event was parsed
  // (an error response, or a server that ignored "stream": true).
  void finish(int status, const std::string& raw_body, Clock::time_point now);
  int n_events() const { return n_events_; }

 private:
  // A content chunk (possibly with empty text: a token whose text the server holds back).
  void on_text(const std::string& text, bool carries_content, Clock::time_point now);
  void read_usage(const nlohmann::json& j);

  RequestRecord& rec_;
  Clock::time_point sent_;
  Clock::time_point last_text_{};
  int n_events_ = 0;
  int usage_completion_tokens_ = -1;
  bool done_ = false;
  std::string error_;
};

// Sends turn `turn_idx` of the session and fills `record` (timestamps relative to `level_start`).
boost::asio::awaitable<void> run_request(const ClientConfig& config, const Session& session, int turn_idx,
                                         const std::vector<std::string>& replies, Clock::time_point level_start,
                                         RequestRecord& record);

}  // namespace kairo::bench::serve
