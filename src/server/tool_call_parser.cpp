#include "server/tool_call_parser.h"

#include <optional>

#include "server/text_markers.h"

namespace kairo::server {

ToolCallParser::ToolCallParser(ToolCallFormat format, std::shared_ptr<const nlohmann::ordered_json> tools)
    : format_(format), tools_(std::move(tools)) {
  if (format_ == ToolCallFormat::DeepSeek) {
    open_ = markers::kDeepSeekCallsBegin;
    close_ = markers::kDeepSeekCallsEnd;
  } else {
    open_ = markers::kToolCallOpen;
    close_ = markers::kToolCallClose;
  }
}

std::optional<std::vector<ParsedToolCall>> ToolCallParser::parse_body(std::string_view body) const {
  if (format_ == ToolCallFormat::DeepSeek) return parse_deepseek_calls(body);
  std::optional<ParsedToolCall> call =
      format_ == ToolCallFormat::Qwen3CoderXml ? parse_xml_call(body, tools_.get()) : parse_json_call(body);
  if (!call) return std::nullopt;
  return std::vector<ParsedToolCall>{std::move(*call)};
}

void ToolCallParser::close_call(Piece& out) {
  std::optional<std::vector<ParsedToolCall>> calls = parse_body(held_);
  if (!calls) {  // not a call after all: the model's text, as written
    out.content += pending_blank_;
    out.content.append(open_).append(held_).append(close_);
  } else {
    for (ParsedToolCall& call : *calls) out.calls.push_back(std::move(call));
    n_calls_ += static_cast<int>(calls->size());
  }
  pending_blank_.clear();
  held_.clear();
  in_call_ = false;
}

void ToolCallParser::emit(std::string_view text, Piece& out) {
  while (!text.empty()) {
    if (in_call_) {
      // The closing marker may have started in an earlier delta: search the body's tail together with the text.
      const size_t from = held_.size() >= close_.size() ? held_.size() - (close_.size() - 1) : 0;
      held_.append(text);
      const size_t close = held_.find(close_, from);
      if (close == std::string::npos) return;
      std::string rest = held_.substr(close + close_.size());
      held_.resize(close);
      close_call(out);
      rest_.swap(rest);
      text = rest_;
      continue;
    }
    const size_t open = text.find(open_);
    const std::string_view before = text.substr(0, open == std::string_view::npos ? text.size() : open);
    const size_t keep = open == std::string_view::npos ? partial_marker_suffix(before, open_) : 0;
    const std::string_view plain = before.substr(0, before.size() - keep);
    if (!plain.empty()) {
      if (n_calls_ > 0 && all_blank(plain)) {
        pending_blank_.append(plain);  // between or after calls: kept only if text follows
      } else {
        out.content += pending_blank_;
        pending_blank_.clear();
        out.content.append(plain);
      }
    }
    if (open == std::string_view::npos) {
      held_.assign(before.substr(before.size() - keep));
      return;
    }
    in_call_ = true;
    held_.clear();
    text = text.substr(open + open_.size());
  }
}

void ToolCallParser::emit_json(std::string_view text, Piece& out) {
  const bool mistral = format_ == ToolCallFormat::Mistral;
  const char opening = mistral ? '[' : '{';
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (json_state_) {
      case JsonState::Text:
        out.content.append(text.substr(i));
        return;
      case JsonState::Start:
      case JsonState::AfterCall:
        if (is_blank(c) || (json_state_ == JsonState::AfterCall && c == ';' && !mistral)) {
          if (json_state_ == JsonState::Start) held_ += c;
          continue;
        }
        if (c != opening) {  // not a call: this (and, at the start, the blanks before it) is content
          if (json_state_ == JsonState::Start) out.content += held_;
          held_.clear();
          json_state_ = JsonState::Text;
          --i;
          continue;
        }
        held_ = std::string(1, opening);
        depth_ = 1;
        in_string_ = escaped_ = false;
        json_state_ = JsonState::Object;
        continue;
      case JsonState::Object:
        held_ += c;
        if (in_string_) {
          if (escaped_) escaped_ = false;
          else if (c == '\\') escaped_ = true;
          else if (c == '"') in_string_ = false;
          continue;
        }
        if (c == '"') in_string_ = true;
        else if (c == '{' || c == '[') ++depth_;
        else if (c == '}' || c == ']') --depth_;
        if (depth_ > 0) continue;
        if (mistral && held_ == markers::kMistralCalls) {  // the marker written as text: the array follows
          held_.clear();
          json_state_ = n_calls_ > 0 ? JsonState::AfterCall : JsonState::Start;
          continue;
        }
        if (std::optional<std::vector<ParsedToolCall>> calls =
                mistral ? parse_json_call_array(held_) : [&]() -> std::optional<std::vector<ParsedToolCall>> {
                  std::optional<ParsedToolCall> call = parse_json_call(held_);
                  if (!call) return std::nullopt;
                  return std::vector<ParsedToolCall>{std::move(*call)};
                }()) {
          for (ParsedToolCall& call : *calls) out.calls.push_back(std::move(call));
          n_calls_ += static_cast<int>(calls->size());
          held_.clear();
          json_state_ = JsonState::AfterCall;
        } else {  // JSON, but not a call: the reply is text
          out.content += held_;
          held_.clear();
          json_state_ = JsonState::Text;
        }
        continue;
    }
  }
}

ToolCallParser::Piece ToolCallParser::push(std::string_view text) {
  Piece out;
  if (format_ == ToolCallFormat::None) {
    out.content.assign(text);
    return out;
  }
  if (format_ == ToolCallFormat::Llama3Json || format_ == ToolCallFormat::Mistral) {
    emit_json(text, out);
    return out;
  }
  if (in_call_) {
    emit(text, out);
    return out;
  }
  std::string joined = std::move(held_);  // a possible opening marker held back, read again with the new text
  held_.clear();
  joined.append(text);
  emit(joined, out);
  return out;
}

ToolCallParser::Piece ToolCallParser::flush() {
  Piece out;
  if (format_ == ToolCallFormat::Llama3Json || format_ == ToolCallFormat::Mistral) {
    // A value never closed, or only blanks: the model's text.
    if (json_state_ == JsonState::Object || json_state_ == JsonState::Start) out.content = std::move(held_);
    held_.clear();
    return out;
  }
  std::optional<std::vector<ParsedToolCall>> calls;
  if (in_call_ && format_ == ToolCallFormat::DeepSeek) calls = parse_body(held_);  // complete calls, section open
  if (calls) {
    for (ParsedToolCall& call : *calls) out.calls.push_back(std::move(call));
    n_calls_ += static_cast<int>(calls->size());
  } else if (in_call_) {  // never closed: the model's text, as written
    out.content += pending_blank_;
    out.content.append(open_).append(held_);
  } else {
    if (n_calls_ == 0) out.content += pending_blank_;
    out.content += held_;
  }
  pending_blank_.clear();
  held_.clear();
  in_call_ = false;
  return out;
}

}  // namespace kairo::server
