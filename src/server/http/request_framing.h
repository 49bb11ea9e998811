#pragma once
// How a request is delimited on the connection (RFC 9112 §2, §5, §6), decided before any body byte is read, and
// refused when it cannot be decided without guessing. A framing that two parsers could read differently is how
// request smuggling works (a proxy in front sees one request, the server two), so every doubt is a refusal that
// closes the connection:
//   - the head is scanned for bare CR or LF, obsolete line folding and whitespace before the first field before
//     Beast parses it (Beast would accept the last two, folding them into a value), and the request line for a
//     well-formed version other than HTTP/1.0 and 1.1 (505; a malformed one is Beast's 400);
//   - after parsing, the fields decide: Transfer-Encoding must end in chunked (else 400) and carry no other coding
//     (else 501: none is implemented), never in HTTP/1.0 and never beside Content-Length; Content-Length must be
//     one field of digits (a repeated or comma-listed one is refused, as llhttp does); HTTP/1.1 needs one Host.
// The session and frame_request() (the same decision over a complete byte string, for tests and the fuzzer) share
// these pieces, so what is tested is what serves.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/fields.hpp>

namespace kairo::server::http_detail {

struct Refusal {
  int status = 400;
  std::string message;
};

// Finds the end of a request head in the bytes received so far, checking each byte once as more arrive.
class RequestHeadScanner {
 public:
  explicit RequestHeadScanner(size_t max_head_bytes) : max_head_bytes_(max_head_bytes) {}

  enum class State { NeedMore, Complete, Refused };
  // `received` starts at the connection's first unread byte and only grows between calls (until reset()).
  State scan(std::string_view received);
  void reset();

  // Complete: the empty lines allowed before the request line (RFC 9112 §2.2), then the head itself (request line,
  // fields and the blank line that ends them).
  size_t leading_bytes() const { return leading_; }
  size_t head_bytes() const { return end_ - leading_; }
  // Refused: why.
  const Refusal& refusal() const { return refusal_; }

 private:
  State refuse(int status, std::string message);

  size_t max_head_bytes_;
  size_t pos_ = 0;        // next byte to check
  size_t leading_ = 0;    // bytes of the empty lines before the request line
  size_t end_ = 0;        // one past the head's blank line
  bool in_head_ = false;  // past the leading empty lines
  bool line_start_ = true;
  size_t line_no_ = 0;    // lines of the head begun so far (1 = request line)
  Refusal refusal_;
};

struct BodyFraming {
  enum class Kind { None, Length, Chunked };
  Kind kind = Kind::None;
  uint64_t length = 0;  // Kind::Length
};

// The decision from a parsed head. `version` is Beast's (11 = HTTP/1.1).
struct FramingDecision {
  std::optional<BodyFraming> framing;  // set when accepted
  Refusal refusal;                     // otherwise
};
FramingDecision decide_framing(unsigned version, const boost::beast::http::fields& fields);

// The status and message for an error Beast's parser reported (bad syntax, limits) in the head or in the body.
Refusal refusal_for_parse_error(const boost::beast::error_code& ec, bool in_body, uint64_t max_body_bytes,
                                uint32_t max_head_bytes, const boost::beast::http::fields& fields_so_far);

// The whole decision over a byte string holding a request (and maybe more after it).
struct FramedRequest {
  enum class Outcome { Accepted, Refused, Incomplete };
  Outcome outcome = Outcome::Incomplete;
  Refusal refusal;        // Refused
  std::string method;     // Accepted
  std::string target;
  std::string body;
  size_t consumed = 0;    // bytes of `bytes` the request took
};
FramedRequest frame_request(std::string_view bytes, uint64_t max_body_bytes, uint32_t max_head_bytes);

}  // namespace kairo::server::http_detail
