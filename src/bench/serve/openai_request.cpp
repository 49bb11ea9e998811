#include "bench/serve/openai_request.h"

#include "bench/serve/sse_parser.h"
#include "core/format.h"

namespace kairo::bench::serve {
namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The text a chunk adds: completions put it in choices[0].text, chat in choices[0].delta.content. Empty when the
// chunk carries none (usage-only or role-only chunks).
std::string chunk_text(const nlohmann::json& j, bool* carries_content = nullptr) {
  if (carries_content != nullptr) *carries_content = false;
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return {};
  const auto& c = j["choices"][0];
  // A generated token whose text the server holds back (an incomplete UTF-8 sequence, a token without text) still
  // arrives as a content chunk, with empty text: it counts as a token event, not as text. The final chunk that only
  // carries a finish_reason does not.
  const bool final_only = c.contains("finish_reason") && !c["finish_reason"].is_null();
  if (c.contains("text") && c["text"].is_string()) {
    std::string text = c["text"].get<std::string>();
    if (carries_content != nullptr) *carries_content = !text.empty() || !final_only;
    return text;
  }
  for (const char* key : {"delta", "message"}) {
    if (c.contains(key) && c[key].is_object()) {
      const auto& d = c[key];
      if (d.contains("content") && d["content"].is_string()) {
        std::string text = d["content"].get<std::string>();
        if (carries_content != nullptr) *carries_content = !text.empty() || !final_only;
        return text;
      }
    }
  }
  return {};
}

std::string error_text(const nlohmann::json& j) {
  const auto& e = j["error"];
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  return e.dump();
}

}  // namespace

nlohmann::json build_request_body(const ClientConfig& config, const Session& s, int turn_idx,
                                  const std::vector<std::string>& replies) {
  const Turn& turn = s.turns[static_cast<size_t>(turn_idx)];
  nlohmann::json body = {{"model", config.model},
                         {"max_tokens", turn.max_tokens},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}},
                         {"temperature", config.temperature}};
  if (config.ignore_eos) body["ignore_eos"] = true;
  if (s.endpoint == Endpoint::Completions) {
    body["prompt"] = turn.user_text;
    return body;
  }
  nlohmann::json messages = nlohmann::json::array();
  if (!s.system_prompt.empty()) messages.push_back({{"role", "system"}, {"content", s.system_prompt}});
  for (int t = 0; t < turn_idx; ++t) {
    messages.push_back({{"role", "user"}, {"content", s.turns[static_cast<size_t>(t)].user_text}});
    messages.push_back({{"role", "assistant"}, {"content", replies[static_cast<size_t>(t)]}});
  }
  messages.push_back({{"role", "user"}, {"content", turn.user_text}});
  body["messages"] = messages;
  return body;
}

void StreamReader::on_text(const std::string& text, bool carries_content, Clock::time_point now) {
  if (!carries_content) return;
  if (rec_.n_chunks == 0) {
    rec_.ttft_s = seconds(now - sent_);
  } else {
    rec_.itl_s.push_back(seconds(now - last_text_));
  }
  last_text_ = now;
  rec_.n_chunks += 1;
  rec_.text += text;
}

void StreamReader::read_usage(const nlohmann::json& j) {
  if (!j.contains("usage") || !j["usage"].is_object()) return;
  const auto& u = j["usage"];
  if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) {
    rec_.prompt_tokens = u["prompt_tokens"].get<int>();
  }
  if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer()) {
    usage_completion_tokens_ = u["completion_tokens"].get<int>();
  }
}

void StreamReader::on_event(const std::string& data, Clock::time_point now) {
  ++n_events_;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  const nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    if (error_.empty()) error_ = "unparseable event: " + quote_for_error(data);
    return;
  }
  if (j.contains("error")) {
    if (error_.empty()) error_ = "error event: " + error_text(j);
    return;
  }
  bool content = false;
  const std::string text = chunk_text(j, &content);
  on_text(text, content, now);
  read_usage(j);
}

void StreamReader::finish(int status, const std::string& raw_body, Clock::time_point now) {
  rec_.e2e_s = seconds(now - sent_);
  if (status != 200) {
    const nlohmann::json j = nlohmann::json::parse(raw_body, nullptr, false);
    const std::string detail = !j.is_discarded() && j.is_object() && j.contains("error") ? error_text(j)
                                                                                          : quote_for_error(raw_body, 200);
    rec_.error = strprintf("HTTP %d: %s", status, detail.c_str());
    return;
  }
  if (n_events_ == 0 && !raw_body.empty()) {  // a plain JSON response: one chunk at the end
    const nlohmann::json j = nlohmann::json::parse(raw_body, nullptr, false);
    if (!j.is_discarded()) {
      bool content = false;
      const std::string text = chunk_text(j, &content);
      on_text(text, content, now);
      read_usage(j);
    }
  }
  rec_.output_tokens = usage_completion_tokens_ >= 0 ? usage_completion_tokens_ : rec_.n_chunks;
  if (!error_.empty()) {
    rec_.error = error_;
  } else if (rec_.n_chunks == 0 && rec_.output_tokens <= 0) {
    rec_.error = "the response carried no generated tokens";
  } else {
    // Tokens the usage counts but no chunk showed (a server that holds back tokens without text, e.g. the halves of
    // a UTF-8 character, and never sends empty chunks): the first of them is only seen at the end.
    if (rec_.n_chunks == 0) rec_.ttft_s = rec_.e2e_s;
    rec_.ok = true;
  }
}

boost::asio::awaitable<void> run_request(const ClientConfig& config, const Session& session, int turn_idx,
                                         const std::vector<std::string>& replies, Clock::time_point level_start,
                                         RequestRecord& rec) {
  const Turn& turn = session.turns[static_cast<size_t>(turn_idx)];
  HttpExchange ex;
  ex.target = endpoint_path(config.url, session.endpoint == Endpoint::Chat ? "chat/completions" : "completions");
  ex.body = build_request_body(config, session, turn_idx, replies).dump();
  if (!config.api_key.empty()) ex.headers.push_back({"Authorization", "Bearer " + config.api_key});
  ex.timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config.timeout_s));
  rec.max_tokens = turn.max_tokens;
  rec.prompt_words = session.system_words + turn.n_words;
  for (int t = 0; t < turn_idx; ++t) rec.prompt_words += session.turns[static_cast<size_t>(t)].n_words;

  const Clock::time_point sent = Clock::now();
  rec.start_s = seconds(sent - level_start);
  StreamReader reader(rec, sent);
  SseParser parser([&](const std::string& data) { reader.on_event(data, Clock::now()); });
  std::string raw;  // kept only while no event has been seen (error bodies, non-streamed replies)
  HttpOutcome outcome;
  co_await http_stream(config.url, ex,
                       [&](std::string_view piece) {
                         if (reader.n_events() == 0 && raw.size() < (1u << 20)) raw.append(piece);
                         parser.feed(piece);
                       },
                       outcome);
  parser.finish();
  if (!outcome.error.empty()) {
    rec.e2e_s = seconds(Clock::now() - sent);
    rec.error = outcome.error;
    co_return;
  }
  reader.finish(outcome.status, raw, Clock::now());
}

}  // namespace kairo::bench::serve
