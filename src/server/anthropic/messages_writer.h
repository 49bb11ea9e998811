#pragma once
// The ResponseWriter of /v1/messages: Anthropic's Message object, and its stream of named events
//   message_start, then per content block content_block_start, content_block_delta..., content_block_stop (a ping
//   after the first block opens), then message_delta (stop_reason, usage) and message_stop; `event: error` when the
//   generation fails mid-stream.
// Blocks follow the reply as it streams: reasoning -> a thinking block (thinking_delta, then an empty
// signature_delta: kairo signs nothing), text -> a text block (text_delta), each tool call -> a tool_use block whose
// input arrives whole in one input_json_delta. A reply with no text and no tool call still has one (empty) text
// block, so content[0] is always there.
#include <string>

#include <nlohmann/json.hpp>

#include "server/response_writer.h"

namespace kairo::server {

// Anthropic's stop_reason for a finished choice: max_tokens, tool_use, stop_sequence (a stop string matched) or
// end_turn.
const char* anthropic_stop_reason(const std::string& finish_reason, const std::string& stop_string);

class MessagesWriter final : public ResponseWriter {
 public:
  MessagesWriter(std::string id, std::string model) : id_(std::move(id)), model_(std::move(model)) {}

  std::string stream_open(size_t n_choices, int n_prompt_tokens) override;
  std::string stream_delta(const ChoiceDelta& delta) override;
  std::string stream_close(const Usage& usage) override;
  std::string stream_error(const ApiError& error) override;
  std::string response(const std::vector<ChoiceResult>& choices, const Usage& usage) override;

 private:
  enum class Block { None, Thinking, Text, ToolUse };
  std::string open_block(Block kind, nlohmann::json content_block);
  std::string close_block();

  std::string id_;
  std::string model_;
  Block open_ = Block::None;
  int n_blocks_ = 0;  // blocks opened so far: the next one's index
  bool pinged_ = false;
  bool answered_ = false;  // a text or tool_use block was opened
  nlohmann::json stop_reason_ = nullptr;
  nlohmann::json stop_sequence_ = nullptr;
};

}  // namespace kairo::server
