#include "server/openai/responses_writer.h"

#include "server/openai/render_response.h"
#include "server/response_ids.h"
#include "server/sse.h"

namespace kairo::server {

using json = nlohmann::ordered_json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json usage_json(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", u.cached_tokens}}},
          {"output_tokens", u.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json output_text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

json message_item(const std::string& id, const char* status, const std::string& text) {
  json content = json::array();
  if (status != std::string("in_progress")) content.push_back(output_text_part(text));
  return {{"id", id}, {"type", "message"}, {"status", status}, {"role", "assistant"}, {"content", std::move(content)}};
}

json reasoning_item(const std::string& id, const char* status, const std::string& text) {
  json content = json::array();
  if (status != std::string("in_progress")) content.push_back({{"type", "reasoning_text"}, {"text", text}});
  return {{"id", id}, {"type", "reasoning"}, {"status", status}, {"summary", json::array()},
          {"content", std::move(content)}};
}

json function_call_item(const std::string& id, const char* status, const ToolCallView& call, bool with_arguments) {
  return {{"id", id},
          {"type", "function_call"},
          {"status", status},
          {"arguments", with_arguments ? call.arguments : std::string()},
          {"call_id", call.id},
          {"name", call.name}};
}

}  // namespace

json ResponsesWriter::response_object(const char* status, const json& output, const Usage* usage) const {
  const bool incomplete = status == std::string("incomplete");
  json r = {{"id", id_},
            {"object", "response"},
            {"created_at", created_at_},
            {"status", status},
            {"background", false},
            {"error", nullptr},
            {"incomplete_details", incomplete ? json{{"reason", "max_output_tokens"}} : json(nullptr)}};
  r["instructions"] = echo_.value("instructions", json());
  r["max_output_tokens"] = echo_.value("max_output_tokens", json());
  r["model"] = model_;
  r["output"] = output;
  r["parallel_tool_calls"] = echo_.value("parallel_tool_calls", true);
  r["previous_response_id"] = nullptr;
  r["reasoning"] = {{"effort", nullptr}, {"summary", nullptr}};
  r["store"] = false;  // kairo stores nothing, whatever the request asked
  for (const char* key : {"temperature", "text", "tool_choice", "tools", "top_p"}) r[key] = echo_.value(key, json());
  r["truncation"] = "disabled";
  r["usage"] = usage ? usage_json(*usage) : json(nullptr);
  r["user"] = echo_.value("user", json());
  r["metadata"] = echo_.value("metadata", json::object());
  return r;
}

std::string ResponsesWriter::event(const char* type, json payload) {
  json e = {{"type", type}, {"sequence_number", sequence_number_++}};
  e.update(payload);
  return sse_named_event(type, dump(e));
}

std::string ResponsesWriter::stream_open(size_t /*n_choices*/, int /*n_prompt_tokens*/) {
  const json r = response_object("in_progress", json::array(), nullptr);
  std::string out = event("response.created", {{"response", r}});
  return out + event("response.in_progress", {{"response", r}});
}

std::string ResponsesWriter::open_item(Item kind) {
  std::string out = close_item();
  const bool message = kind == Item::Message;
  item_id_ = random_hex_id(message ? "msg_" : "rs_");
  item_text_.clear();
  open_ = kind;
  answered_ = answered_ || message;
  const int index = static_cast<int>(output_.size());
  out += event("response.output_item.added", {{"output_index", index},
                                              {"item", message ? message_item(item_id_, "in_progress", "")
                                                               : reasoning_item(item_id_, "in_progress", "")}});
  const json part = message ? output_text_part("") : json{{"type", "reasoning_text"}, {"text", ""}};
  return out + event("response.content_part.added",
                     {{"item_id", item_id_}, {"output_index", index}, {"content_index", 0}, {"part", part}});
}

std::string ResponsesWriter::close_item() {
  if (open_ == Item::None) return "";
  const bool message = open_ == Item::Message;
  const int index = static_cast<int>(output_.size());
  const json where = {{"item_id", item_id_}, {"output_index", index}, {"content_index", 0}};
  json done = where;
  done["text"] = item_text_;
  if (message) done["logprobs"] = json::array();
  std::string out = event(message ? "response.output_text.done" : "response.reasoning_text.done", done);
  json part_done = where;
  part_done["part"] = message ? output_text_part(item_text_) : json{{"type", "reasoning_text"}, {"text", item_text_}};
  out += event("response.content_part.done", part_done);
  const json item = message ? message_item(item_id_, "completed", item_text_)
                            : reasoning_item(item_id_, "completed", item_text_);
  out += event("response.output_item.done", {{"output_index", index}, {"item", item}});
  output_.push_back(item);
  open_ = Item::None;
  return out;
}

std::string ResponsesWriter::add_call(const ToolCallView& call) {
  std::string out = close_item();
  const std::string id = random_hex_id("fc_");
  const int index = static_cast<int>(output_.size());
  answered_ = true;
  out += event("response.output_item.added",
               {{"output_index", index}, {"item", function_call_item(id, "in_progress", call, false)}});
  out += event("response.function_call_arguments.delta",
               {{"item_id", id}, {"output_index", index}, {"delta", call.arguments}});
  out += event("response.function_call_arguments.done",
               {{"item_id", id}, {"output_index", index}, {"name", call.name}, {"arguments", call.arguments}});
  const json item = function_call_item(id, "completed", call, true);
  out += event("response.output_item.done", {{"output_index", index}, {"item", item}});
  output_.push_back(item);
  return out;
}

std::string ResponsesWriter::stream_delta(const ChoiceDelta& d) {
  std::string out;
  auto append = [&](Item kind, const std::string& text, const char* delta_event) {
    if (text.empty()) return;
    if (open_ != kind) out += open_item(kind);
    item_text_ += text;
    json payload = {{"item_id", item_id_}, {"output_index", output_.size()}, {"content_index", 0}, {"delta", text}};
    if (kind == Item::Message) payload["logprobs"] = json::array();
    out += event(delta_event, std::move(payload));
  };
  append(Item::Reasoning, d.reasoning, "response.reasoning_text.delta");
  append(Item::Message, d.text, "response.output_text.delta");
  for (const auto& [index, call] : d.tool_calls) out += add_call(call);
  if (d.finish_reason) incomplete_ = *d.finish_reason == "length";
  return out;
}

std::string ResponsesWriter::stream_close(const Usage& usage) {
  std::string out = close_item();
  if (!answered_) {
    out += open_item(Item::Message);
    out += close_item();
  }
  const char* status = incomplete_ ? "incomplete" : "completed";
  return out + event(incomplete_ ? "response.incomplete" : "response.completed",
                     {{"response", response_object(status, output_, &usage)}});
}

std::string ResponsesWriter::stream_error(const ApiError& error) {
  return event("error", {{"code", error.code.empty() ? json(error.type) : json(error.code)},
                         {"message", error.message},
                         {"param", error.param.empty() ? json(nullptr) : json(error.param)}});
}

std::string ResponsesWriter::response(const std::vector<ChoiceResult>& choices, const Usage& usage) {
  const ChoiceResult& c = choices.at(0);  // the Responses API has no n: one choice
  json output = json::array();
  if (c.reasoning && !c.reasoning->empty()) {
    output.push_back(reasoning_item(random_hex_id("rs_"), "completed", *c.reasoning));
  }
  if (!c.text.empty() || c.tool_calls.empty()) {
    output.push_back(message_item(random_hex_id("msg_"), "completed", c.text));
  }
  for (const ToolCallView& call : c.tool_calls) {
    output.push_back(function_call_item(random_hex_id("fc_"), "completed", call, true));
  }
  return dump(response_object(c.finish_reason == "length" ? "incomplete" : "completed", output, &usage));
}

}  // namespace kairo::server
