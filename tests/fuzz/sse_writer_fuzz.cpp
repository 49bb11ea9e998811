// The response / SSE writer with arbitrary bytes from the model: generated text, token pieces (half characters,
// control bytes, quotes, newlines), stop strings and error messages. Every payload must be valid JSON and valid
// UTF-8 on one line (so the SSE framing "data: <json>\n\n" cannot be broken), and valid UTF-8 text must arrive
// unchanged.
//
// Input: byte 0 flags, then NUL-separated fields: text, token, alternative tokens..., stop string.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "server/openai/render_response.h"
#include "server/sse.h"

namespace {

using namespace kairo::server;
using json = nlohmann::json;

bool valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();  // the strict (throwing) handler
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

json check_payload(const std::string& payload) {
  KAIRO_FUZZ_CHECK(payload.find('\n') == std::string::npos && payload.find('\r') == std::string::npos,
                   "a raw line break in an SSE payload");
  KAIRO_FUZZ_CHECK(valid_utf8(payload), "payload is not valid UTF-8");
  json j = json::parse(payload, nullptr, false);
  KAIRO_FUZZ_CHECK(!j.is_discarded(), "payload is not valid JSON");
  const std::string event = sse_event(payload);
  KAIRO_FUZZ_CHECK(event.rfind("data: ", 0) == 0 && event.find("\n\n") == event.size() - 2, "SSE framing");
  return j;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kairo::fuzz::Input in(data, size);
  const uint8_t flags = in.byte();
  std::vector<std::string> fields(1);
  for (char c : in.rest()) {
    if (c == '\0') {
      fields.emplace_back();
    } else {
      fields.back().push_back(c);
    }
  }
  while (fields.size() < 4) fields.emplace_back();
  const std::string& text = fields[0];

  ResponseMeta meta;
  meta.kind = (flags & 1) ? ApiKind::Chat : ApiKind::Completion;
  meta.id = "cmpl-1";
  meta.created = 1700000000;
  meta.model = fields.back();  // a model name a client chose

  TokenLogprobView lp;
  lp.token = fields[1];
  lp.logprob = (flags & 2) ? -1.5f : -std::numeric_limits<float>::infinity();
  for (size_t i = 2; i + 1 < fields.size(); ++i) lp.top.emplace_back(fields[i], -2.0f - static_cast<float>(i));

  ChoiceDelta delta;
  delta.index = flags >> 4;
  delta.role = flags & 4;
  delta.text = text;
  delta.with_logprobs = flags & 8;
  delta.logprobs = {lp, lp};
  delta.text_offset = text.size();
  if (flags & 2) {
    delta.finish_reason = "stop";
    delta.stop_reason = fields[fields.size() - 2];
  }
  const json chunk = check_payload(render_chunk(meta, delta, flags & 16));
  if (valid_utf8(text) && !delta.role && !text.empty()) {
    const json& choice = chunk["choices"][0];
    const json& got = meta.kind == ApiKind::Chat ? choice["delta"]["content"] : choice["text"];
    KAIRO_FUZZ_CHECK(got == text, "streamed text changed");
  }

  ChoiceResult result;
  result.text = text;
  result.finish_reason = "length";
  result.stop_reason = fields[fields.size() - 2];
  result.with_logprobs = flags & 8;
  result.logprobs = {lp};
  const json full = check_payload(render_response(meta, {result, result}, Usage{3, 4, 1}));
  if (valid_utf8(text)) {
    const json& choice = full["choices"][1];
    const json& got = meta.kind == ApiKind::Chat ? choice["message"]["content"] : choice["text"];
    KAIRO_FUZZ_CHECK(got == text, "response text changed");
  }

  ApiError err = invalid_param(fields[1], "bad value " + text);
  (void)check_payload(render_error(err));
  (void)check_payload(render_detokenize(text));
  (void)check_payload(render_usage_chunk(meta, Usage{1, 2, 0}));
  return 0;
}
