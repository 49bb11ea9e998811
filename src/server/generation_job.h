#pragma once
// The engine-client adapter: one generation request (OpenAI completions or chat, Anthropic Messages, OpenAI
// Responses) = one or more engine requests (n choices, batched prompts). It submits them, receives their outputs (the
// engine's callbacks only post to the connection's executor; all work happens there), splits reasoning and tool calls
// out of the text, streams SSE events or assembles the complete response through its API's ResponseWriter, records
// metrics, and aborts its engine requests when the client leaves or the server shuts down.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "server/exchange.h"
#include "server/openai/render_response.h"
#include "server/reasoning_splitter.h"
#include "server/response_writer.h"
#include "server/tool_call_parser.h"
#include "server/server_context.h"
#include "server/tenant_usage.h"

namespace kairo::server {

struct ToolCallOptions {
  ToolCallFormat format = ToolCallFormat::None;
  std::shared_ptr<const nlohmann::ordered_json> tools;
};

struct GenerationOptions {
  std::unique_ptr<ResponseWriter> writer;  // the API's wire format
  bool stream = false;
  int logprobs = -1;
  int n_per_prompt = 1;  // usage counts each prompt once, not once per choice
  // Chat: split reasoning from content (ServerConfig::split_reasoning); the prompt opened the thinking block.
  bool split_reasoning = false;
  bool reasoning_opened = false;
  // Chat with tools: calls in this format are parsed out of the content (None: not parsed), read against the
  // request's tools.
  ToolCallOptions tool_calls;
  // The tenant's seat and token charges (empty for the anonymous tenant): released when the job completes, or when
  // it is destroyed without completing, exactly once either way.
  TenantLease tenant;
};

class GenerationJob : public std::enable_shared_from_this<GenerationJob> {
 public:
  // Submits `requests` (choice i = requests[i]) and answers on `exchange`: an error (429 when the engine queue is
  // full, ...) if any submit is refused, else the response or stream. Call on the exchange's executor.
  // The job keeps the context alive: the engine may release its callbacks (and so the job) after the Server is gone.
  static void start(std::shared_ptr<ServerContext> ctx, const Backend& backend, std::shared_ptr<Exchange> exchange,
                    GenerationOptions options, std::vector<engine::Request> requests);

  // Shutdown: aborts the engine requests; the client gets a 503 (or an error event in the stream). Thread-safe.
  void cancel_for_shutdown();

  GenerationJob(std::shared_ptr<ServerContext> ctx, const Backend& backend, std::shared_ptr<Exchange> exchange,
                GenerationOptions options, size_t n_choices);
  ~GenerationJob();

 private:
  using Clock = std::chrono::steady_clock;

  struct Choice {
    engine::RequestId id = 0;
    bool submitted = false;
    bool finished = false;
    engine::FinishReason reason = engine::FinishReason::None;
    std::string stop_reason;
    std::string error;  // why the engine aborted it on its own (a failed device)
    std::string text;
    std::string reasoning;
    std::optional<ReasoningSplitter> splitter;
    std::optional<ToolCallParser> tool_parser;
    std::vector<ToolCallView> tool_calls;
    std::vector<TokenLogprobView> logprobs;
    std::vector<float> embedding;  // an embedding request's vector, from its final output
    int n_prompt = 0;
    int n_cached = 0;
    int n_generated = 0;
    bool has_first_token = false;
    Clock::time_point first_token;
    Clock::time_point last_token;
  };

  void on_output(size_t idx, const engine::RequestOutput& out);
  void on_client_gone();
  void abort_unfinished();
  void complete();
  Usage usage() const;
  std::vector<TokenLogprobView> logprob_views(const engine::RequestOutput& out) const;
  void write_stream(const std::string& sse_text);

  std::shared_ptr<ServerContext> ctx_;  // before exchange_: outlives it (the exchange counts into its metrics)
  // The model's lease (model_registry.h): it is not unloaded while this job lives. After ctx_, so released before.
  std::shared_ptr<const Backend> backend_;
  std::shared_ptr<Exchange> exchange_;
  GenerationOptions options_;
  std::vector<Choice> choices_;
  uint64_t inflight_id_ = 0;
  size_t n_submitted_ = 0;
  size_t n_finished_ = 0;
  bool rejected_ = false;       // a submit was refused and the error already sent
  bool client_gone_ = false;
  bool shutdown_cancel_ = false;
  bool completed_ = false;
};

}  // namespace kairo::server
