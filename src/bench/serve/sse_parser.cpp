#include "bench/serve/sse_parser.h"

namespace kairo::bench::serve {

void SseParser::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (last_was_cr_ && c == '\n') {  // the LF of a CRLF already ended the line at the CR
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      line(pending_);
      pending_.clear();
    } else {
      pending_ += c;
    }
  }
}

void SseParser::finish() {
  if (!pending_.empty()) {
    line(pending_);
    pending_.clear();
  }
  line("");
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {  // blank line: dispatch
    if (has_data_) on_event_(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (l.front() == ':') return;  // comment / keep-alive
  const size_t colon = l.find(':');
  const std::string_view field = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

}  // namespace kairo::bench::serve
