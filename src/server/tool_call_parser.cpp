#include "server/tool_call_parser.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "server/text_markers.h"

namespace kairo::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

// A call's JSON body: {"name": string, "arguments" | "parameters": object} (both keys optional-object).
std::optional<ParsedToolCall> parse_call(const std::string& text) {
  const nlohmann::ordered_json body = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) return std::nullopt;
  const char* key = body.contains("arguments") ? "arguments" : body.contains("parameters") ? "parameters" : nullptr;
  if (key != nullptr && !body[key].is_object()) return std::nullopt;
  return ParsedToolCall{body["name"].get<std::string>(), key != nullptr ? body[key].dump() : "{}"};
}

constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";

// Mistral's body: a non-empty JSON array of calls.
std::optional<std::vector<ParsedToolCall>> parse_call_array(const std::string& text) {
  const nlohmann::ordered_json body = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_array() || body.empty()) return std::nullopt;
  std::vector<ParsedToolCall> calls;
  for (const auto& element : body) {
    std::optional<ParsedToolCall> call = parse_call(element.dump());
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  return calls;
}

}  // namespace

ToolCallFormat detect_tool_call_format(std::string_view source) {
  if (source.find(kOpen) != std::string_view::npos) return ToolCallFormat::Hermes;
  if (source.find(kMistralMarker) != std::string_view::npos) return ToolCallFormat::Mistral;
  if (source.find(R"({"name": function name, "parameters": dictionary)") != std::string_view::npos) {
    return ToolCallFormat::Llama3Json;
  }
  return ToolCallFormat::None;
}

void ToolCallParser::close_call(Piece& out) {
  std::optional<ParsedToolCall> call = parse_call(held_);
  if (!call) {  // not a call after all: the model's text, as written
    out.content += pending_blank_;
    out.content.append(kOpen).append(held_).append(kClose);
  } else {
    out.calls.push_back(std::move(*call));
    ++n_calls_;
  }
  pending_blank_.clear();
  held_.clear();
  in_call_ = false;
}

void ToolCallParser::emit(std::string_view text, Piece& out) {
  while (!text.empty()) {
    if (in_call_) {
      // The closing marker may have started in an earlier delta: search the body's tail together with the text.
      const size_t from = held_.size() >= kClose.size() ? held_.size() - (kClose.size() - 1) : 0;
      held_.append(text);
      const size_t close = held_.find(kClose, from);
      if (close == std::string::npos) return;
      std::string rest = held_.substr(close + kClose.size());
      held_.resize(close);
      close_call(out);
      rest_.swap(rest);
      text = rest_;
      continue;
    }
    const size_t open = text.find(kOpen);
    const std::string_view before = text.substr(0, open == std::string_view::npos ? text.size() : open);
    const size_t keep = open == std::string_view::npos ? partial_marker_suffix(before, kOpen) : 0;
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
    text = text.substr(open + kOpen.size());
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
        if (mistral && held_ == kMistralMarker) {  // the marker written as text: the array follows
          held_.clear();
          json_state_ = n_calls_ > 0 ? JsonState::AfterCall : JsonState::Start;
          continue;
        }
        if (std::optional<std::vector<ParsedToolCall>> calls =
                mistral ? parse_call_array(held_) : [&]() -> std::optional<std::vector<ParsedToolCall>> {
                  std::optional<ParsedToolCall> call = parse_call(held_);
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
  if (in_call_) {  // never closed: the model's text, as written
    out.content += pending_blank_;
    out.content.append(kOpen).append(held_);
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
