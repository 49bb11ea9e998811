#pragma once
// How one generation's results go on the wire. The GenerationJob produces the same results for every API — text,
// reasoning, tool calls, finish reasons, usage — and a writer per API turns them into that API's JSON:
//   CompletionWriter (openai/completion_writer.h): /v1/completions and /v1/chat/completions;
//   ResponsesWriter  (openai/responses_writer.h):  /v1/responses;
//   MessagesWriter   (anthropic/messages_writer.h): /v1/messages.
// A streaming writer keeps state (which content block or output item is open, a sequence number), so a writer
// serves one job. The stream_* calls return framed SSE text to write, possibly empty; errors before the first byte
// are not written here but sent by the exchange (Exchange::set_error_renderer picks their shape).
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/openai/render_response.h"

namespace kairo::server {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // The stream opened (its 200 head is out). n_prompt_tokens: the prompts' length as submitted.
  virtual std::string stream_open(size_t n_choices, int n_prompt_tokens) = 0;
  // One engine step's worth of one choice; finish_reason is set on its last.
  virtual std::string stream_delta(const ChoiceDelta& delta) = 0;
  // Every choice finished normally: what ends the stream.
  virtual std::string stream_close(const Usage& usage) = 0;
  // The generation failed after the stream opened: what tells the client and ends the stream.
  virtual std::string stream_error(const ApiError& error) = 0;

  // The complete (non-streamed) response body.
  virtual std::string response(const std::vector<ChoiceResult>& choices, const Usage& usage) = 0;
};

}  // namespace kairo::server
