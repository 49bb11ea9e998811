#include "server/http/request_framing.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/format.h"

namespace kairo::server::http_detail {

namespace http = boost::beast::http;

namespace {

constexpr const char* kMalformed = "malformed HTTP request: ";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Boost 1.74's string_view is not std's.
std::string_view view(boost::beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The elements of a comma-separated list (RFC 9110 §5.6.1); nullopt when one is empty. The RFC lets a recipient
// drop empty elements, but llhttp refuses a trailing one: in the framing fields an odd list is refused, so no two
// parsers can disagree about it.
std::optional<std::vector<std::string_view>> list_elements(std::string_view value) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view element = trim_ows(value.substr(start, comma - start));
    if (element.empty()) return std::nullopt;
    out.push_back(element);
    start = comma + 1;
  }
  return out;
}

FramingDecision refuse(int status, std::string message) { return {std::nullopt, Refusal{status, std::move(message)}}; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The request line's last word, when it is a well-formed HTTP-version (RFC 9112 §2.3: "HTTP/" DIGIT "." DIGIT) other
// than the two this server speaks: 505 and close. HTTP/0.9 and HTTP/2.0 are other protocols on this connection (an
// HTTP/2 client starts with its preface, never this line). HTTP/1.2 to 1.9 do not exist; RFC 9110 §6.2 would read
// them as HTTP/1.1, but Beast and llhttp both refuse them, and a framing two parsers could read differently is
// refused here, so they get the same 505. Anything else (a bad version, or no version) stays Beast's 400.
std::optional<Refusal> check_version(std::string_view request_line) {
  const size_t space = request_line.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view version = request_line.substr(space + 1);
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !is_digit(version[5]) || version[6] != '.' ||
      !is_digit(version[7])) {
    return std::nullopt;
  }
  if (version == "HTTP/1.1" || version == "HTTP/1.0") return std::nullopt;
  return Refusal{505, strprintf("the request is %s, a version this server does not speak; send HTTP/1.1 (or "
                                "HTTP/1.0)",
                                std::string(version).c_str())};
}

}  // namespace

RequestHeadScanner::State RequestHeadScanner::refuse(int status, std::string message) {
  refusal_ = Refusal{status, std::move(message)};
  return State::Refused;
}

void RequestHeadScanner::reset() { *this = RequestHeadScanner(max_head_bytes_); }

RequestHeadScanner::State RequestHeadScanner::scan(std::string_view received) {
  while (pos_ < received.size()) {
    if (pos_ >= max_head_bytes_) {
      return refuse(431, strprintf("the request head is larger than %zu bytes; send fewer or shorter headers (the "
                                   "server's limit is --max-header-bytes)",
                                   max_head_bytes_));
    }
    const char c = received[pos_];
    if (c == '\n') return refuse(400, std::string(kMalformed) + "a line of the request head ends in a bare LF; "
                                                               "HTTP/1.1 ends every line with CRLF");
    if (c == '\r') {
      if (pos_ + 1 >= received.size()) return State::NeedMore;  // the LF has not arrived yet
      if (received[pos_ + 1] != '\n') {
        return refuse(400, std::string(kMalformed) + "a CR not followed by LF in the request head");
      }
      if (!line_start_ && line_no_ == 1) {
        // The request line ends here. A version Beast does not read is "bad version" to it, whether it is garbage or
        // a well-formed HTTP/2.0; only the first is malformed (RFC 9110 §15.6.6: 505 names an unsupported version).
        if (auto r = check_version(received.substr(leading_, pos_ - leading_))) return refuse(r->status, r->message);
      }
      if (line_start_) {
        if (!in_head_) {
          leading_ = pos_ + 2;  // an empty line before the request line: skipped (RFC 9112 §2.2)
        } else {
          end_ = pos_ + 2;
          return State::Complete;
        }
      }
      line_start_ = true;
      pos_ += 2;
      continue;
    }
    if (line_start_) {
      in_head_ = true;
      ++line_no_;
      // Beast would fold such a line into the previous field's value, or (after the request line) parse it as a
      // field; another parser might not. RFC 9112 §2.2 and §5.2 let a server refuse both.
      if (line_no_ == 2 && (c == ' ' || c == '\t')) {
        return refuse(400, std::string(kMalformed) + "whitespace between the request line and the first header");
      }
      if (line_no_ > 2 && (c == ' ' || c == '\t')) {
        return refuse(400, std::string(kMalformed) + "a header line starts with a space or tab (obsolete line "
                                                     "folding); send each header on one line");
      }
      line_start_ = false;
    }
    ++pos_;
  }
  return State::NeedMore;
}

FramingDecision decide_framing(unsigned version, const http::fields& fields) {
  std::string transfer_encoding;  // every Transfer-Encoding field, joined as one list (RFC 9110 §5.3)
  bool has_transfer_encoding = false;
  std::vector<std::string_view> content_lengths;
  int n_host = 0;
  for (const auto& field : fields) {
    const std::string_view name = view(field.name_string());
    if (iequals(name, "transfer-encoding")) {
      if (has_transfer_encoding) transfer_encoding += ",";
      transfer_encoding += std::string(field.value());
      has_transfer_encoding = true;
    } else if (iequals(name, "content-length")) {
      content_lengths.push_back(view(field.value()));
    } else if (iequals(name, "host")) {
      ++n_host;
    }
  }

  if (version >= 11 && n_host != 1) {
    return refuse(400, n_host == 0 ? std::string(kMalformed) + "an HTTP/1.1 request needs a Host header"
                                   : std::string(kMalformed) + "more than one Host header");
  }

  if (has_transfer_encoding) {
    if (version < 11) {
      return refuse(400, std::string(kMalformed) + "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1); send "
                                                   "the body with Content-Length");
    }
    if (!content_lengths.empty()) {
      return refuse(400, std::string(kMalformed) + "both Content-Length and Transfer-Encoding; send only one");
    }
    const auto elements = list_elements(transfer_encoding);
    if (!elements) {
      return refuse(400, strprintf("%sTransfer-Encoding \"%s\" has an empty element", kMalformed,
                                   transfer_encoding.substr(0, 64).c_str()));
    }
    const std::vector<std::string_view>& codings = *elements;
    if (!iequals(codings.back(), "chunked")) {
      return refuse(400, strprintf("%sTransfer-Encoding \"%s\" does not end in chunked, so the body's length cannot "
                                   "be known (RFC 9112 §6.3); send it chunked or with Content-Length",
                                   kMalformed, transfer_encoding.substr(0, 64).c_str()));
    }
    for (size_t i = 0; i + 1 < codings.size(); ++i) {
      if (iequals(codings[i], "chunked")) {
        return refuse(400, std::string(kMalformed) + "chunked applied more than once in Transfer-Encoding");
      }
    }
    if (codings.size() > 1) {
      return refuse(501, strprintf("the transfer coding \"%s\" is not implemented; send the body with chunked "
                                   "alone or with Content-Length",
                                   lower(codings.front().substr(0, 32)).c_str()));
    }
    return {BodyFraming{BodyFraming::Kind::Chunked, 0}, {}};
  }

  if (content_lengths.empty()) return {BodyFraming{}, {}};
  if (content_lengths.size() > 1) {
    return refuse(400, std::string(kMalformed) + "more than one Content-Length header; send one");
  }
  const std::string_view value = trim_ows(content_lengths.front());
  if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string_view::npos) {
    return refuse(400, strprintf("%sContent-Length \"%s\" is not a single decimal number", kMalformed,
                                 std::string(value.substr(0, 32)).c_str()));
  }
  const uint64_t length = std::stoull(std::string(value));
  if (length == 0) return {BodyFraming{}, {}};
  return {BodyFraming{BodyFraming::Kind::Length, length}, {}};
}

Refusal refusal_for_parse_error(const boost::beast::error_code& ec, bool in_body, uint64_t max_body_bytes,
                                uint32_t max_head_bytes, const http::fields& fields_so_far) {
  if (ec == http::error::header_limit) {
    return {431, strprintf("the request head is larger than %u bytes; send fewer or shorter headers (the server's "
                           "limit is --max-header-bytes)",
                           max_head_bytes)};
  }
  if (ec == http::error::body_limit) {
    // When the head announced the size, the message repeats it (Beast stops at that field).
    std::string size;
    if (auto it = fields_so_far.find(http::field::content_length); !in_body && it != fields_so_far.end()) {
      const std::string value(it->value());
      if (!value.empty() && value.size() <= 20 && value.find_first_not_of("0123456789") == std::string::npos) {
        size = " of " + value + " bytes";
      }
    }
    return {413, strprintf("the request body%s is larger than the limit of %llu bytes (the server's "
                           "--max-body-bytes)",
                           size.c_str(), static_cast<unsigned long long>(max_body_bytes))};
  }
  return {400, std::string(in_body ? "malformed HTTP request body: " : kMalformed) + ec.message()};
}

FramedRequest frame_request(std::string_view bytes, uint64_t max_body_bytes, uint32_t max_head_bytes) {
  FramedRequest out;
  auto refused = [&](Refusal r) {
    out.outcome = FramedRequest::Outcome::Refused;
    out.refusal = std::move(r);
    return out;
  };

  RequestHeadScanner scanner(max_head_bytes);
  switch (scanner.scan(bytes)) {
    case RequestHeadScanner::State::NeedMore: return out;
    case RequestHeadScanner::State::Refused: return refused(scanner.refusal());
    case RequestHeadScanner::State::Complete: break;
  }
  http::request_parser<http::string_body> parser;
  parser.header_limit(max_head_bytes);
  parser.body_limit(max_body_bytes);
  boost::beast::error_code ec;
  const std::string_view head = bytes.substr(scanner.leading_bytes(), scanner.head_bytes());
  parser.put(boost::asio::buffer(head.data(), head.size()), ec);
  if (ec) return refused(refusal_for_parse_error(ec, false, max_body_bytes, max_head_bytes, parser.get()));
  if (!parser.is_header_done()) return refused({400, std::string(kMalformed) + "the request head did not parse"});
  const FramingDecision decision = decide_framing(parser.get().version(), parser.get());
  if (!decision.framing) return refused(decision.refusal);

  // The body, from whatever follows the head; Beast's put() takes what it can and asks for more.
  size_t pos = scanner.leading_bytes() + scanner.head_bytes();
  while (!parser.is_done()) {
    if (pos == bytes.size()) return out;  // incomplete
    const size_t used = parser.put(boost::asio::buffer(bytes.data() + pos, bytes.size() - pos), ec);
    if (ec == http::error::need_more) {
      if (used == 0) return out;  // Beast needs bytes that are not there
      ec = {};
    }
    if (ec) return refused(refusal_for_parse_error(ec, true, max_body_bytes, max_head_bytes, parser.get()));
    pos += used;
  }
  const auto& msg = parser.get();
  out.outcome = FramedRequest::Outcome::Accepted;
  out.method = std::string(msg.method_string());
  out.target = std::string(msg.target());
  out.body = msg.body();
  out.consumed = pos;
  return out;
}

}  // namespace kairo::server::http_detail
