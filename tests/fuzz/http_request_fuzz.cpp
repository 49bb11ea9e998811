// The HTTP request-head scanner and framing decision (src/server/http/request_framing.h) with arbitrary bytes from
// the network. Beyond "no crash, no sanitizer report": the decision over the bytes at once equals the scanner's
// verdict when the same bytes arrive one at a time (as a slow client sends them), an accepted request never claims
// more bytes than it was given, and its body respects the limit.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/http/request_framing.h"

namespace {

using kairo::server::http_detail::frame_request;
using kairo::server::http_detail::FramedRequest;
using kairo::server::http_detail::RequestHeadScanner;

constexpr uint64_t kMaxBody = 4096;
constexpr uint32_t kMaxHead = 1024;

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const FramedRequest r = frame_request(bytes, kMaxBody, kMaxHead);
  if (r.outcome == FramedRequest::Outcome::Accepted) {
    check(r.consumed <= size);
    check(r.body.size() <= kMaxBody);
  }
  // A refusal is a 4xx, 501 (a transfer coding kairo does not implement) or 505 (an HTTP version it does not speak).
  if (r.outcome == FramedRequest::Outcome::Refused) {
    const int s = r.refusal.status;
    check((s >= 400 && s <= 499) || s == 501 || s == 505);
  }

  RequestHeadScanner whole(kMaxHead), trickled(kMaxHead);
  const auto verdict = whole.scan(bytes);
  auto state = RequestHeadScanner::State::NeedMore;
  for (size_t n = 1; n <= size && state == RequestHeadScanner::State::NeedMore; ++n) {
    state = trickled.scan(bytes.substr(0, n));
  }
  check(state == verdict);
  if (verdict == RequestHeadScanner::State::Complete) check(trickled.head_bytes() == whole.head_bytes());
  return 0;
}
