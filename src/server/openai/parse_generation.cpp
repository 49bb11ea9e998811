// Sampling, stop and streaming parameters shared by completions and chat, the completions prompt, and the JSON
// body itself.
#include <charconv>
#include <cmath>
#include <limits>

#include "core/format.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

constexpr int64_t kMaxTokensCeiling = 1 << 30;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxUserBytes = 1024;

std::optional<ApiError> parse_stop(const json& body, const ParseContext& ctx, GenerationParams& out) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return std::nullopt;
  return parse_stop_strings(*it, "stop", ctx, out.stop);
}

std::optional<ApiError> parse_token_list(const json& v, const std::string& param, int n_vocab, size_t max_count,
                                         std::vector<int32_t>& out) {
  if (!v.is_array()) {
    return invalid_param(param, strprintf("'%s' must be an array of token ids, got %s", param.c_str(), kind_of(v)));
  }
  if (v.size() > max_count) {
    return invalid_param(param, strprintf("'%s' has %zu entries; at most %zu are accepted", param.c_str(), v.size(),
                                          max_count));
  }
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (!e.is_number_integer() && !e.is_number_unsigned()) {
      return invalid_param(param, strprintf("'%s[%zu]' must be a token id (an integer), got %s", param.c_str(), i,
                                            kind_of(e)));
    }
    const bool in_range = e.is_number_unsigned() ? e.get<uint64_t>() < static_cast<uint64_t>(n_vocab)
                                                 : (e.get<int64_t>() >= 0 && e.get<int64_t>() < n_vocab);
    if (!in_range) {
      return invalid_param(param, strprintf("'%s[%zu]' is %s, which is not a token id: this model's ids run from 0 "
                                            "to %d",
                                            param.c_str(), i, preview(e).c_str(), n_vocab - 1));
    }
    out.push_back(static_cast<int32_t>(e.get<int64_t>()));
  }
  return std::nullopt;
}

std::optional<ApiError> parse_logit_bias(const json& body, const ParseContext& ctx, GenerationParams& out) {
  auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) {
    return invalid_param("logit_bias", strprintf("'logit_bias' must be an object mapping token ids to biases, got %s",
                                                 kind_of(*it)));
  }
  if (it->size() > static_cast<size_t>(ctx.limits.max_logit_bias)) {
    return invalid_param("logit_bias", strprintf("'logit_bias' has %zu entries; at most %d are accepted "
                                                 "(the server's --max-logit-bias)",
                                                 it->size(), ctx.limits.max_logit_bias));
  }
  for (const auto& [key, value] : it->items()) {
    int64_t id = -1;
    const char* first = key.data();
    const char* last = key.data() + key.size();
    auto [ptr, ec] = std::from_chars(first, last, id);
    if (key.empty() || ec != std::errc() || ptr != last || id < 0 || id >= ctx.n_vocab) {
      return invalid_param("logit_bias", strprintf("logit_bias key %s is not a token id: this model's ids run from 0 "
                                                   "to %d",
                                                   quote_for_error(key, 32).c_str(), ctx.n_vocab - 1));
    }
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < -100.0 ||
        value.get<double>() > 100.0) {
      return invalid_param("logit_bias", strprintf("logit_bias[%s] must be a number from -100 to 100, got %s",
                                                   key.c_str(), preview(value).c_str()));
    }
    out.sampling.logit_bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
  }
  return std::nullopt;
}

// Fields some clients send that kairo cannot honour: refused rather than silently ignored.
std::optional<ApiError> reject_unsupported(const json& body, bool is_chat) {
  if (present(body, "best_of")) {
    int64_t best_of = 1;
    KAIRO_API_TRY(get_int(body, "best_of", "best_of", 1, 1 << 20, best_of));
    if (best_of != 1) return invalid_param("best_of", "'best_of' other than 1 is not supported; use 'n'");
  }
  if (present(body, "suffix")) return invalid_param("suffix", "'suffix' (insertion) is not supported");
  if (present(body, "functions") || present(body, "function_call")) {
    return invalid_param("functions", "the legacy 'functions' / 'function_call' fields are not supported; use 'tools'");
  }
  return std::nullopt;
}

}  // namespace

ApiResult<json> parse_json_body(const std::string& body, int max_depth) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return api_error(400, "the request body is empty; send a JSON object");
  }
  if (json_nesting_depth(body, max_depth) > max_depth) {
    return api_error(400, strprintf("the request body nests JSON deeper than %d levels (the server's "
                                    "--max-json-depth)",
                                    max_depth));
  }
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); what.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
      what = what.substr(pos + 2);
    }
    return api_error(400, "the request body is not valid JSON: " + what);
  }
  if (!parsed.is_object()) {
    return api_error(400, strprintf("the request body must be a JSON object, got %s", kind_of(parsed)));
  }
  return parsed;
}

std::optional<ApiError> parse_stop_strings(const json& value, const std::string& key, const ParseContext& ctx,
                                           std::vector<std::string>& out) {
  auto check_one = [&](const json& v, const std::string& param) -> std::optional<ApiError> {
    if (!v.is_string()) return invalid_param(param, strprintf("'%s' must be a string, got %s", param.c_str(), kind_of(v)));
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty()) return invalid_param(param, "stop strings must not be empty");
    if (s.size() > static_cast<size_t>(ctx.limits.max_stop_bytes)) {
      return invalid_param(param, strprintf("stop string of %zu bytes is longer than the limit of %d bytes "
                                            "(the server's --max-stop-bytes)",
                                            s.size(), ctx.limits.max_stop_bytes));
    }
    out.push_back(s);
    return std::nullopt;
  };
  if (value.is_string()) return check_one(value, key);
  if (!value.is_array()) {
    return invalid_param(key, strprintf("'%s' must be a string or an array of strings, got %s", key.c_str(),
                                        kind_of(value)));
  }
  if (value.size() > static_cast<size_t>(ctx.limits.max_stop)) {
    return invalid_param(key, strprintf("%zu stop strings were given; at most %d are accepted "
                                        "(the server's --max-stop)",
                                        value.size(), ctx.limits.max_stop));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    if (auto e = check_one(value[i], strprintf("%s[%zu]", key.c_str(), i))) return e;
  }
  return std::nullopt;
}

std::optional<ApiError> parse_max_tokens(const json& body, const char* key, const ParseContext& ctx,
                                         GenerationParams& out) {
  if (!present(body, key)) return std::nullopt;
  const int64_t max_tokens_cap = ctx.limits.max_tokens > 0 ? ctx.limits.max_tokens : kMaxTokensCeiling;
  int64_t max_tokens = 0;
  KAIRO_API_TRY(get_int(body, key, key, 1, kMaxTokensCeiling, max_tokens));
  if (max_tokens > max_tokens_cap) {
    return invalid_param(key, strprintf("'%s' is %lld; this server allows at most %lld (its --max-tokens-limit)", key,
                                        static_cast<long long>(max_tokens), static_cast<long long>(max_tokens_cap)));
  }
  out.max_tokens = static_cast<int>(max_tokens);
  out.max_tokens_field = key;
  return std::nullopt;
}

std::optional<ApiError> parse_generation_params(const json& body, const ParseContext& ctx, bool is_chat,
                                                GenerationParams& out) {
  KAIRO_API_TRY(reject_unsupported(body, is_chat));
  KAIRO_API_TRY(get_string(body, "model", "model", kMaxNameBytes, out.model));

  KAIRO_API_TRY(parse_max_tokens(
      body, is_chat && present(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens", ctx, out));

  auto& s = out.sampling;
  KAIRO_API_TRY(get_number(body, "temperature", "temperature", 0.0, 2.0, s.temperature));
  KAIRO_API_TRY(get_number(body, "top_p", "top_p", 0.0, 1.0, s.top_p));
  int64_t top_k = 0;
  KAIRO_API_TRY(get_int(body, "top_k", "top_k", -1, std::numeric_limits<int32_t>::max(), top_k));
  s.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);
  KAIRO_API_TRY(get_number(body, "min_p", "min_p", 0.0, 1.0, s.min_p));
  KAIRO_API_TRY(get_number(body, "presence_penalty", "presence_penalty", -2.0, 2.0, s.presence_penalty));
  KAIRO_API_TRY(get_number(body, "frequency_penalty", "frequency_penalty", -2.0, 2.0, s.frequency_penalty));
  KAIRO_API_TRY(get_number(body, "repetition_penalty", "repetition_penalty", 0.0, 10.0, s.repetition_penalty));
  if (!(s.repetition_penalty > 0.0f)) {
    return invalid_param("repetition_penalty", "'repetition_penalty' must be greater than 0 (1 = off)");
  }
  if (present(body, "seed")) {
    int64_t seed = 0;
    KAIRO_API_TRY(get_int(body, "seed", "seed", std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), seed));
    s.seed = static_cast<uint64_t>(seed);
  }
  KAIRO_API_TRY(parse_logit_bias(body, ctx, out));
  KAIRO_API_TRY(parse_stop(body, ctx, out));
  if (auto it = body.find("stop_token_ids"); it != body.end() && !it->is_null()) {
    KAIRO_API_TRY(parse_token_list(*it, "stop_token_ids", ctx.n_vocab, ctx.limits.max_logit_bias,
                                   out.stop_token_ids));
  }
  KAIRO_API_TRY(get_bool(body, "ignore_eos", "ignore_eos", out.ignore_eos));
  KAIRO_API_TRY(get_int(body, "n", "n", 1, ctx.limits.max_n, out.n));
  KAIRO_API_TRY(get_bool(body, "stream", "stream", out.stream));
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) {
      return invalid_param("stream_options", strprintf("'stream_options' must be an object, got %s", kind_of(*it)));
    }
    if (!out.stream) {
      return invalid_param("stream_options", "'stream_options' is only allowed when 'stream' is true");
    }
    KAIRO_API_TRY(get_bool(*it, "include_usage", "stream_options.include_usage", out.include_usage));
  }

  if (is_chat) {
    bool logprobs = false;
    KAIRO_API_TRY(get_bool(body, "logprobs", "logprobs", logprobs));
    int top = 0;
    KAIRO_API_TRY(get_int(body, "top_logprobs", "top_logprobs", 0, ctx.limits.max_logprobs, top));
    if (present(body, "top_logprobs") && !logprobs) {
      return invalid_param("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    }
    out.logprobs = logprobs ? top : -1;
  } else if (present(body, "logprobs")) {
    int lp = 0;
    KAIRO_API_TRY(get_int(body, "logprobs", "logprobs", 0, ctx.limits.max_logprobs, lp));
    out.logprobs = lp;
  }
  s.n_logprobs = out.logprobs;
  KAIRO_API_TRY(get_string(body, "user", "user", kMaxUserBytes, out.user));
  KAIRO_API_TRY(get_int(body, "priority", "priority", -(1 << 20), 1 << 20, out.priority));
  KAIRO_API_TRY(get_bool(body, "speculative", "speculative", out.speculative));
  KAIRO_API_TRY(parse_lora_field(body, out));
  KAIRO_API_TRY(parse_structured_output(body, out));
  return std::nullopt;
}

std::optional<ApiError> parse_prompt_list(const json& body, const char* key, const ParseContext& ctx,
                                          std::vector<Prompt>& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    return invalid_param(key, strprintf("'%s' is required: a string, an array of strings, an array of token ids, "
                                        "or an array of token-id arrays",
                                        key));
  }
  const json& p = *it;
  const size_t max_tokens_in_prompt = ctx.limits.max_body_bytes;  // each id takes at least 2 bytes of JSON
  if (p.is_string()) {
    if (p.get_ref<const std::string&>().empty()) return invalid_param(key, strprintf("'%s' must not be empty", key));
    out.push_back({true, p.get<std::string>(), {}});
  } else if (p.is_array()) {
    if (p.empty()) return invalid_param(key, strprintf("'%s' must not be an empty array", key));
    const json& first = p[0];
    if (first.is_number()) {
      Prompt prompt{false, {}, {}};
      if (auto e = parse_token_list(p, key, ctx.n_vocab, max_tokens_in_prompt, prompt.tokens)) return *e;
      out.push_back(std::move(prompt));
    } else {
      if (p.size() > static_cast<size_t>(ctx.limits.max_prompts)) {
        return invalid_param(key, strprintf("'%s' holds %zu prompts; at most %d are accepted in one request (the "
                                            "server's --max-prompts)",
                                            key, p.size(), ctx.limits.max_prompts));
      }
      for (size_t i = 0; i < p.size(); ++i) {
        const std::string param = strprintf("%s[%zu]", key, i);
        if (p[i].is_string()) {
          if (p[i].get_ref<const std::string&>().empty()) {
            return invalid_param(param, strprintf("'%s' must not be empty", param.c_str()));
          }
          out.push_back({true, p[i].get<std::string>(), {}});
        } else if (p[i].is_array()) {
          if (p[i].empty()) return invalid_param(param, strprintf("'%s' must not be empty", param.c_str()));
          Prompt prompt{false, {}, {}};
          if (auto e = parse_token_list(p[i], param, ctx.n_vocab, max_tokens_in_prompt, prompt.tokens)) return *e;
          out.push_back(std::move(prompt));
        } else {
          return invalid_param(param, strprintf("'%s' must be a string or an array of token ids, got %s",
                                                param.c_str(), kind_of(p[i])));
        }
      }
    }
  } else {
    return invalid_param(key, strprintf("'%s' must be a string or an array, got %s", key, kind_of(p)));
  }
  return std::nullopt;
}

ApiResult<CompletionRequest> parse_completion_request(const json& body, const ParseContext& ctx) {
  CompletionRequest req;
  if (auto e = parse_generation_params(body, ctx, /*is_chat=*/false, req.params)) return *e;
  if (auto e = get_bool(body, "echo", "echo", req.echo)) return *e;
  if (req.echo) return invalid_param("echo", "'echo' is not supported");

  if (auto e = parse_prompt_list(body, "prompt", ctx, req.prompts)) return *e;
  const int64_t n_choices = static_cast<int64_t>(req.prompts.size()) * req.params.n;
  if (n_choices > ctx.limits.max_n) {
    return invalid_param("n", strprintf("%zu prompts x n=%d = %lld choices; at most %d are accepted per request "
                                        "(the server's --max-n)",
                                        req.prompts.size(), req.params.n, static_cast<long long>(n_choices),
                                        ctx.limits.max_n));
  }
  return req;
}

ApiResult<TokenizeRequest> parse_tokenize_request(const json& body, const ParseContext& ctx) {
  TokenizeRequest req;
  std::string model;
  if (auto e = get_string(body, "model", "model", kMaxNameBytes, model)) return *e;
  if (auto e = get_bool(body, "add_special_tokens", "add_special_tokens", req.add_special_tokens)) return *e;
  if (present(body, "messages")) {
    req.is_chat = true;
    if (auto e = parse_chat_messages(body, ctx, req.chat)) return *e;
    return req;
  }
  if (!present(body, "prompt")) return invalid_param("prompt", "'prompt' (a string) or 'messages' is required");
  if (auto e = get_string(body, "prompt", "prompt", ctx.limits.max_body_bytes, req.prompt)) return *e;
  return req;
}

ApiResult<DetokenizeRequest> parse_detokenize_request(const json& body, const ParseContext& ctx) {
  DetokenizeRequest req;
  std::string model;
  if (auto e = get_string(body, "model", "model", kMaxNameBytes, model)) return *e;
  auto it = body.find("tokens");
  if (it == body.end() || it->is_null()) return invalid_param("tokens", "'tokens' (an array of token ids) is required");
  if (auto e = parse_token_list(*it, "tokens", ctx.n_vocab, ctx.limits.max_body_bytes, req.tokens)) return *e;
  return req;
}

}  // namespace kairo::server
