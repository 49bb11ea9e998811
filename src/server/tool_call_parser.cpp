#include "server/tool_call_parser.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "server/text_markers.h"

namespace kairo::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

}  // namespace

ToolCallFormat detect_tool_call_format(std::string_view source) {
  return source.find(kOpen) != std::string_view::npos ? ToolCallFormat::Hermes : ToolCallFormat::None;
}

void ToolCallParser::close_call(Piece& out) {
  const nlohmann::ordered_json body = nlohmann::ordered_json::parse(held_, nullptr, /*allow_exceptions=*/false);
  const bool is_call = body.is_object() && body.contains("name") && body["name"].is_string() &&
                       (!body.contains("arguments") || body["arguments"].is_object());
  if (!is_call) {  // not a call after all: the model's text, as written
    out.content += pending_blank_;
    out.content.append(kOpen).append(held_).append(kClose);
  } else {
    ParsedToolCall call;
    call.name = body["name"].get<std::string>();
    call.arguments = body.contains("arguments") ? body["arguments"].dump() : "{}";
    out.calls.push_back(std::move(call));
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

ToolCallParser::Piece ToolCallParser::push(std::string_view text) {
  Piece out;
  if (format_ == ToolCallFormat::None) {
    out.content.assign(text);
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
