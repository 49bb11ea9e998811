#pragma once
// Incremental Server-Sent Events parser (the WHATWG event-stream format): bytes arrive in arbitrary pieces from the
// socket; each complete event's data (multi-line `data:` fields joined by '\n') is handed to the callback. Comment
// lines (":") and other fields (event, id, retry) are skipped; CRLF, LF and CR line ends are all accepted.
#include <functional>
#include <string>
#include <string_view>

namespace kairo::bench::serve {

class SseParser {
 public:
  using OnEvent = std::function<void(const std::string& data)>;
  explicit SseParser(OnEvent on_event) : on_event_(std::move(on_event)) {}

  void feed(std::string_view bytes);
  // End of stream: an event not yet terminated by a blank line is dispatched (servers that close right after the
  // last data line).
  void finish();

 private:
  void line(std::string_view l);

  OnEvent on_event_;
  std::string pending_;     // bytes of an unfinished line
  std::string data_;        // data of the event being built
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

}  // namespace kairo::bench::serve
