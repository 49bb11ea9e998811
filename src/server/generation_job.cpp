#include "server/generation_job.h"

#include <algorithm>

#include "server/response_ids.h"

namespace kairo::server {

namespace {

const char* openai_finish_reason(engine::FinishReason r, bool made_tool_calls = false) {
  switch (r) {
    case engine::FinishReason::Length: return "length";
    case engine::FinishReason::Abort: return "abort";
    default: return made_tool_calls ? "tool_calls" : "stop";
  }
}

// OpenAI's "call_" + 24 characters; Mistral's templates refuse any id that is not 9 alphanumerics. Every API shows
// the same id (a client sends it back with the tool's result, which the template must then accept).
std::string call_id(ToolCallFormat format) {
  return format == ToolCallFormat::Mistral ? random_alnum_id("", 9) : random_alnum_id("call_", 24);
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

GenerationJob::GenerationJob(std::shared_ptr<ServerContext> ctx, const Backend& backend,
                             std::shared_ptr<Exchange> exchange, GenerationOptions options, size_t n_choices)
    : ctx_(std::move(ctx)),
      backend_(backend.shared_from_this()),
      exchange_(std::move(exchange)),
      options_(std::move(options)),
      choices_(n_choices) {}

GenerationJob::~GenerationJob() {
  if (inflight_id_ != 0 && !completed_) ctx_->inflight.remove(inflight_id_);
}

void GenerationJob::start(std::shared_ptr<ServerContext> ctx, const Backend& backend,
                          std::shared_ptr<Exchange> exchange, GenerationOptions options,
                          std::vector<engine::Request> requests) {
  auto job = std::make_shared<GenerationJob>(ctx, backend, exchange, std::move(options), requests.size());
  job->inflight_id_ = ctx->inflight.add(job);
  const size_t n = static_cast<size_t>(std::max(1, job->options_.n_per_prompt));
  int n_prompt_tokens = 0;  // each prompt once: its n choices share it
  for (size_t i = 0; i < requests.size(); i += n) {
    n_prompt_tokens += static_cast<int>(requests[i].prompt_tokens.size());
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    // The engine calls back on its own thread: hop to the connection's executor, which is where this runs now, so
    // no output is handled before the id below is recorded.
    auto callback = [job, i](const engine::RequestOutput& out) {
      job->exchange_->post([job, i, out] { job->on_output(i, out); });
    };
    // Choices 1..n-1 of a prompt fork choice 0's KV once its prompt is computed (one prefill for all n).
    if (i % n != 0) requests[i].fork_of = job->choices_[i - i % n].id;
    auto submitted = backend.engine->submit(std::move(requests[i]), std::move(callback));
    if (auto* rejection = std::get_if<engine::SubmitRejection>(&submitted)) {
      job->rejected_ = true;
      job->options_.tenant.refund();  // the tokens of a request the engine would not take
      job->abort_unfinished();
      exchange->send_error(from_submit_rejection(*rejection, ctx->config.retry_after_s));
      if (job->n_submitted_ == 0) job->complete();
      return;
    }
    job->choices_[i].id = std::get<engine::RequestId>(submitted);
    job->choices_[i].submitted = true;
    ++job->n_submitted_;
  }
  job->options_.tenant.confirm();
  if (job->options_.stream) {
    exchange->begin_stream(200, "text/event-stream",
                           {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}});
    job->write_stream(job->options_.writer->stream_open(job->choices_.size(), n_prompt_tokens));
  }
  std::weak_ptr<GenerationJob> weak = job;
  exchange->on_disconnect([weak] {
    if (auto j = weak.lock()) j->on_client_gone();
  });
}

void GenerationJob::cancel_for_shutdown() {
  auto self = shared_from_this();
  exchange_->post([self] {
    self->shutdown_cancel_ = true;
    self->abort_unfinished();
  });
}

void GenerationJob::abort_unfinished() {
  for (auto& c : choices_) {
    if (c.submitted && !c.finished) backend_->engine->abort(c.id);
  }
}

void GenerationJob::on_client_gone() {
  client_gone_ = true;
  abort_unfinished();
}

std::vector<TokenLogprobView> GenerationJob::logprob_views(const engine::RequestOutput& out) const {
  std::vector<TokenLogprobView> views;
  for (const auto& t : out.tokens) {
    if (!t.logprob) continue;
    TokenLogprobView v;
    v.token = backend_->tokenizer->token_to_piece(t.token);
    v.logprob = *t.logprob;
    const size_t n_top = options_.logprobs > 0 ? std::min<size_t>(t.top_logprobs.size(), options_.logprobs) : 0;
    for (size_t k = 0; k < n_top; ++k) {
      v.top.emplace_back(backend_->tokenizer->token_to_piece(t.top_logprobs[k].token), t.top_logprobs[k].logprob);
    }
    views.push_back(std::move(v));
  }
  return views;
}

void GenerationJob::write_stream(const std::string& sse_text) {
  if (!sse_text.empty() && exchange_->connected()) exchange_->write_chunk(sse_text);
}

void GenerationJob::on_output(size_t idx, const engine::RequestOutput& out) {
  if (idx >= choices_.size()) return;
  Choice& c = choices_[idx];
  if (c.finished) return;
  const auto now = Clock::now();
  if (!out.tokens.empty()) {
    if (!c.has_first_token) {
      c.has_first_token = true;
      c.first_token = now;
      backend_->model->metrics.time_to_first_token.observe(seconds_between(exchange_->arrival(), now));
    } else {
      const double per_token = seconds_between(c.last_token, now) / static_cast<double>(out.tokens.size());
      for (size_t k = 0; k < out.tokens.size(); ++k) backend_->model->metrics.inter_token_latency.observe(per_token);
    }
    c.last_token = now;
  }
  const size_t text_offset = c.text.size();
  std::string content = out.text_delta;
  std::string reasoning;
  if (options_.split_reasoning) {
    if (!c.splitter) c.splitter.emplace(options_.reasoning_opened);
    ReasoningSplitter::Piece piece = c.splitter->push(out.text_delta);
    if (out.finished) {
      ReasoningSplitter::Piece rest = c.splitter->flush();
      piece.reasoning += rest.reasoning;
      piece.content += rest.content;
    }
    content = std::move(piece.content);
    reasoning = std::move(piece.reasoning);
    c.reasoning += reasoning;
  }
  std::vector<std::pair<int, ToolCallView>> new_calls;
  if (options_.tool_calls.format != ToolCallFormat::None) {
    if (!c.tool_parser) c.tool_parser.emplace(options_.tool_calls.format, options_.tool_calls.tools);
    ToolCallParser::Piece piece = c.tool_parser->push(content);
    if (out.finished) {
      ToolCallParser::Piece rest = c.tool_parser->flush();
      piece.content += rest.content;
      for (auto& call : rest.calls) piece.calls.push_back(std::move(call));
    }
    content = std::move(piece.content);
    for (ParsedToolCall& call : piece.calls) {
      ToolCallView v{call_id(options_.tool_calls.format), std::move(call.name), std::move(call.arguments)};
      new_calls.emplace_back(static_cast<int>(c.tool_calls.size()), v);
      c.tool_calls.push_back(std::move(v));
    }
  }
  c.text += content;
  std::vector<TokenLogprobView> views;
  if (options_.logprobs >= 0) {
    views = logprob_views(out);
    c.logprobs.insert(c.logprobs.end(), views.begin(), views.end());
  }
  c.n_prompt = out.n_prompt_tokens;
  c.n_cached = out.n_cached_prompt_tokens;
  options_.tenant.charge_generated(out.n_generated_tokens - c.n_generated);
  c.n_generated = out.n_generated_tokens;

  const bool normal_finish = out.finished && out.finish_reason != engine::FinishReason::Abort;
  // One chunk per engine step that generated tokens, even when their text is empty or held back (control tokens,
  // half of a UTF-8 character), as vLLM and llama.cpp's server stream: clients see every token arrive (TTFT, ITL),
  // not a burst when the text finally completes.
  if (options_.stream && !rejected_ && !client_gone_ &&
      (!out.text_delta.empty() || !out.tokens.empty() || !views.empty() || normal_finish)) {
    ChoiceDelta d;
    d.index = static_cast<int>(idx);
    d.text = std::move(content);
    d.reasoning = std::move(reasoning);
    d.tool_calls = std::move(new_calls);
    d.with_logprobs = options_.logprobs >= 0;
    d.logprobs = std::move(views);
    d.text_offset = text_offset;
    if (normal_finish) {
      d.finish_reason = openai_finish_reason(out.finish_reason, !c.tool_calls.empty());
      d.stop_reason = out.stop_reason;
    }
    write_stream(options_.writer->stream_delta(d));
  }

  if (!out.finished) return;
  c.finished = true;
  c.reason = out.finish_reason;
  c.stop_reason = out.stop_reason;
  c.error = out.error;
  c.embedding = out.embedding;
  backend_->model->metrics.count_finished(c.reason, c.n_prompt, c.n_generated);
  backend_->model->metrics.e2e_request_latency.observe(seconds_between(exchange_->arrival(), now));
  if (out.queue_seconds > 0 || out.prefill_seconds > 0) {
    backend_->model->metrics.request_queue_time.observe(out.queue_seconds);
    backend_->model->metrics.request_prefill_time.observe(out.prefill_seconds);
  }
  if (c.has_first_token) backend_->model->metrics.request_decode_time.observe(seconds_between(c.first_token, now));
  if (++n_finished_ == n_submitted_) complete();
}

Usage GenerationJob::usage() const {
  Usage u;
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    if (i % std::max(1, options_.n_per_prompt) == 0) {
      u.prompt_tokens += c.n_prompt;
      u.cached_tokens += c.n_cached;
    }
    u.completion_tokens += c.n_generated;
  }
  return u;
}

void GenerationJob::complete() {
  if (completed_) return;
  completed_ = true;
  ctx_->inflight.remove(inflight_id_);
  // Before the response goes out, so a client that saw it end may send the next request at once.
  options_.tenant.release();
  // Likewise the model's lease, once the engine has nothing left to call back with: a client's next request may need
  // this model unloaded to make room for another (model_registry.h).
  if (n_finished_ == n_submitted_) backend_.reset();
  const Usage u = usage();
  exchange_->set_tokens(u.prompt_tokens, u.completion_tokens);
  if (rejected_ || client_gone_ || !exchange_->connected()) return;

  const bool aborted = std::any_of(choices_.begin(), choices_.end(),
                                   [](const Choice& c) { return c.reason == engine::FinishReason::Abort; });
  if (aborted) {
    const auto failed = std::find_if(choices_.begin(), choices_.end(), [](const Choice& c) { return !c.error.empty(); });
    const ApiError error =
        failed != choices_.end() ? api_error(500, failed->error, "device_failed")
        : shutdown_cancel_ || ctx_->shutting_down.load()
            ? api_error(503, "the request was cancelled because the server is shutting down", "shutting_down")
            : api_error(500, "the engine aborted the request before it finished");
    if (options_.stream) {
      write_stream(options_.writer->stream_error(error));
      exchange_->end_stream();
    } else {
      exchange_->send_error(error);
    }
    return;
  }

  if (options_.stream) {
    write_stream(options_.writer->stream_close(u));
    exchange_->end_stream();
    return;
  }
  std::vector<ChoiceResult> results;
  results.reserve(choices_.size());
  for (size_t i = 0; i < choices_.size(); ++i) {
    Choice& c = choices_[i];
    ChoiceResult r;
    r.index = static_cast<int>(i);
    r.text = std::move(c.text);
    if (options_.split_reasoning) r.reasoning = std::move(c.reasoning);
    r.finish_reason = openai_finish_reason(c.reason, !c.tool_calls.empty());
    r.tool_calls = std::move(c.tool_calls);
    r.stop_reason = c.stop_reason;
    r.with_logprobs = options_.logprobs >= 0;
    r.logprobs = std::move(c.logprobs);
    r.embedding = std::move(c.embedding);
    results.push_back(std::move(r));
  }
  exchange_->send_json(200, options_.writer->response(results, u));
}

}  // namespace kairo::server
