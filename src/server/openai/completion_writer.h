#pragma once
// The ResponseWriter of /v1/completions and /v1/chat/completions: OpenAI's text_completion / chat.completion
// objects, and their streams of unnamed chunks ending in `data: [DONE]` (render_response.h renders each one).
#include "server/response_writer.h"

namespace kairo::server {

class CompletionWriter final : public ResponseWriter {
 public:
  // include_usage: stream_options.include_usage (every chunk carries "usage": null, a usage chunk ends the stream).
  CompletionWriter(ResponseMeta meta, bool include_usage) : meta_(std::move(meta)), include_usage_(include_usage) {}

  std::string stream_open(size_t n_choices, int n_prompt_tokens) override;
  std::string stream_delta(const ChoiceDelta& delta) override;
  std::string stream_close(const Usage& usage) override;
  std::string stream_error(const ApiError& error) override;
  std::string response(const std::vector<ChoiceResult>& choices, const Usage& usage) override;

 private:
  ResponseMeta meta_;
  bool include_usage_;
};

}  // namespace kairo::server
