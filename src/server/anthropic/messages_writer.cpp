#include "server/anthropic/messages_writer.h"

#include "server/anthropic/anthropic_error.h"
#include "server/sse.h"

namespace kairo::server {

using json = nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Each event's data repeats its name as "type", which is what Anthropic's clients read.
std::string event(const char* name, json payload) {
  payload["type"] = name;
  return sse_named_event(name, dump(payload));
}

// A call's arguments are a JSON object's text (tool_call_parser.h); Anthropic shows them as the object.
json tool_input(const std::string& arguments) {
  json input = json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return input.is_object() ? input : json::object();
}

}  // namespace

const char* anthropic_stop_reason(const std::string& finish_reason, const std::string& stop_string) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls") return "tool_use";
  return stop_string.empty() ? "end_turn" : "stop_sequence";
}

std::string MessagesWriter::stream_open(size_t /*n_choices*/, int n_prompt_tokens) {
  const json message = {{"id", id_},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", model_},
                        {"content", json::array()},
                        {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", n_prompt_tokens}, {"output_tokens", 0}}}};
  return event("message_start", {{"message", message}});
}

std::string MessagesWriter::open_block(Block kind, json content_block) {
  std::string out = close_block();
  out += event("content_block_start", {{"index", n_blocks_}, {"content_block", std::move(content_block)}});
  if (!pinged_) {  // where Anthropic's own streams send theirs
    out += event("ping", json::object());
    pinged_ = true;
  }
  open_ = kind;
  answered_ = answered_ || kind == Block::Text || kind == Block::ToolUse;
  ++n_blocks_;
  return out;
}

std::string MessagesWriter::close_block() {
  if (open_ == Block::None) return "";
  std::string out;
  if (open_ == Block::Thinking) {
    out += event("content_block_delta",
                 {{"index", n_blocks_ - 1}, {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
  }
  out += event("content_block_stop", {{"index", n_blocks_ - 1}});
  open_ = Block::None;
  return out;
}

std::string MessagesWriter::stream_delta(const ChoiceDelta& d) {
  std::string out;
  if (!d.reasoning.empty()) {
    if (open_ != Block::Thinking) out += open_block(Block::Thinking, {{"type", "thinking"}, {"thinking", ""}});
    out += event("content_block_delta",
                 {{"index", n_blocks_ - 1}, {"delta", {{"type", "thinking_delta"}, {"thinking", d.reasoning}}}});
  }
  if (!d.text.empty()) {
    if (open_ != Block::Text) out += open_block(Block::Text, {{"type", "text"}, {"text", ""}});
    out += event("content_block_delta",
                 {{"index", n_blocks_ - 1}, {"delta", {{"type", "text_delta"}, {"text", d.text}}}});
  }
  for (const auto& [index, call] : d.tool_calls) {
    out += open_block(Block::ToolUse,
                      {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", json::object()}});
    out += event("content_block_delta", {{"index", n_blocks_ - 1},
                                         {"delta", {{"type", "input_json_delta"}, {"partial_json", call.arguments}}}});
    out += close_block();
  }
  if (d.finish_reason) {
    stop_reason_ = anthropic_stop_reason(*d.finish_reason, d.stop_reason);
    stop_sequence_ = stop_reason_ == "stop_sequence" ? json(d.stop_reason) : json(nullptr);
  }
  return out;
}

std::string MessagesWriter::stream_close(const Usage& usage) {
  std::string out = close_block();
  if (!answered_) {
    out += open_block(Block::Text, {{"type", "text"}, {"text", ""}});
    out += close_block();
  }
  out += event("message_delta",
               {{"delta", {{"stop_reason", stop_reason_.is_null() ? json("end_turn") : stop_reason_},
                           {"stop_sequence", stop_sequence_}}},
                {"usage", {{"input_tokens", usage.prompt_tokens}, {"output_tokens", usage.completion_tokens}}}});
  return out + event("message_stop", json::object());
}

std::string MessagesWriter::stream_error(const ApiError& error) {
  return sse_named_event("error", render_anthropic_error(error));
}

std::string MessagesWriter::response(const std::vector<ChoiceResult>& choices, const Usage& usage) {
  const ChoiceResult& c = choices.at(0);  // the Messages API has no n: one choice
  json content = json::array();
  if (c.reasoning && !c.reasoning->empty()) {
    content.push_back({{"type", "thinking"}, {"thinking", *c.reasoning}, {"signature", ""}});
  }
  if (!c.text.empty() || c.tool_calls.empty()) content.push_back({{"type", "text"}, {"text", c.text}});
  for (const ToolCallView& call : c.tool_calls) {
    content.push_back(
        {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", tool_input(call.arguments)}});
  }
  const std::string stop_reason = anthropic_stop_reason(c.finish_reason, c.stop_reason);
  return dump({{"id", id_},
               {"type", "message"},
               {"role", "assistant"},
               {"model", model_},
               {"content", std::move(content)},
               {"stop_reason", stop_reason},
               {"stop_sequence", stop_reason == "stop_sequence" ? json(c.stop_reason) : json(nullptr)},
               {"usage", {{"input_tokens", usage.prompt_tokens}, {"output_tokens", usage.completion_tokens}}}});
}

}  // namespace kairo::server
