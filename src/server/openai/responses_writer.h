#pragma once
// The ResponseWriter of /v1/responses: OpenAI's Response object, and its stream of named events, each with a
// sequence_number from 0:
//   response.created, response.in_progress;
//   per output item: response.output_item.added, then for a message response.content_part.added,
//   response.output_text.delta..., response.output_text.done, response.content_part.done (a reasoning item the same
//   with reasoning_text), for a function call response.function_call_arguments.delta and .done; then
//   response.output_item.done;
//   response.completed (or response.incomplete when max_output_tokens cut the reply); `event: error` when the
//   generation fails mid-stream.
// Items follow the reply as it streams: reasoning -> a reasoning item, text -> a message item with one output_text
// part, each tool call -> a function_call item whose arguments arrive whole in one delta. A reply with neither text
// nor a call still has one (empty) message, so output[0] is always there.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "server/response_writer.h"

namespace kairo::server {

class ResponsesWriter final : public ResponseWriter {
 public:
  // echo: the request fields the Response object repeats (ResponsesRequest::echo).
  ResponsesWriter(std::string id, int64_t created_at, std::string model, nlohmann::ordered_json echo)
      : id_(std::move(id)), created_at_(created_at), model_(std::move(model)), echo_(std::move(echo)) {}

  std::string stream_open(size_t n_choices, int n_prompt_tokens) override;
  std::string stream_delta(const ChoiceDelta& delta) override;
  std::string stream_close(const Usage& usage) override;
  std::string stream_error(const ApiError& error) override;
  std::string response(const std::vector<ChoiceResult>& choices, const Usage& usage) override;

 private:
  enum class Item { None, Reasoning, Message };
  nlohmann::ordered_json response_object(const char* status, const nlohmann::ordered_json& output,
                                         const Usage* usage) const;
  std::string event(const char* type, nlohmann::ordered_json payload);
  std::string open_item(Item kind);
  std::string close_item();
  std::string add_call(const ToolCallView& call);

  std::string id_;
  int64_t created_at_;
  std::string model_;
  nlohmann::ordered_json echo_;
  int sequence_number_ = 0;
  nlohmann::ordered_json output_ = nlohmann::ordered_json::array();  // finished items
  Item open_ = Item::None;
  std::string item_id_;    // the open item's
  std::string item_text_;  // the open item's text so far
  bool answered_ = false;  // a message or function_call item was added
  bool incomplete_ = false;
};

}  // namespace kairo::server
