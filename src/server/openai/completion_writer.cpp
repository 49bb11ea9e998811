#include "server/openai/completion_writer.h"

#include "server/sse.h"

namespace kairo::server {

std::string CompletionWriter::stream_open(size_t n_choices, int /*n_prompt_tokens*/) {
  if (meta_.kind != ApiKind::Chat) return "";
  // Chat streams open each choice with its role, before any token.
  std::string out;
  for (size_t i = 0; i < n_choices; ++i) {
    ChoiceDelta d;
    d.index = static_cast<int>(i);
    d.role = true;
    out += sse_event(render_chunk(meta_, d, include_usage_));
  }
  return out;
}

std::string CompletionWriter::stream_delta(const ChoiceDelta& delta) {
  return sse_event(render_chunk(meta_, delta, include_usage_));
}

std::string CompletionWriter::stream_close(const Usage& usage) {
  std::string out;
  if (include_usage_) out = sse_event(render_usage_chunk(meta_, usage));
  return out + kSseDone;
}

std::string CompletionWriter::stream_error(const ApiError& error) { return sse_event(render_error(error)) + kSseDone; }

std::string CompletionWriter::response(const std::vector<ChoiceResult>& choices, const Usage& usage) {
  return render_response(meta_, choices, usage);
}

}  // namespace kairo::server
