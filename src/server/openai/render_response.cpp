#include "server/openai/render_response.h"

#include <algorithm>

#include <cmath>

#include <nlohmann/json.hpp>

namespace kairo::server {

using json = nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json null_or(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// JSON has no -inf; a banned token's logprob is written as -9999 (what vLLM does).
double finite_logprob(float lp) { return std::isfinite(lp) ? static_cast<double>(lp) : -9999.0; }

json token_bytes(const std::string& token) {
  json bytes = json::array();
  for (unsigned char c : token) bytes.push_back(static_cast<int>(c));
  return bytes;
}

json chat_logprobs(const std::vector<TokenLogprobView>& entries) {
  json content = json::array();
  for (const auto& e : entries) {
    json top = json::array();
    for (const auto& [tok, lp] : e.top) {
      top.push_back({{"token", tok}, {"logprob", finite_logprob(lp)}, {"bytes", token_bytes(tok)}});
    }
    content.push_back({{"token", e.token},
                       {"logprob", finite_logprob(e.logprob)},
                       {"bytes", token_bytes(e.token)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

// The legacy completions shape: parallel arrays, text offsets into the choice's text.
json completion_logprobs(const std::vector<TokenLogprobView>& entries, size_t offset) {
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(),
       text_offset = json::array();
  for (const auto& e : entries) {
    tokens.push_back(e.token);
    token_logprobs.push_back(finite_logprob(e.logprob));
    if (e.top.empty()) {
      top_logprobs.push_back(nullptr);
    } else {
      json top = json::object();
      for (const auto& [tok, lp] : e.top) {
        if (!top.contains(tok)) top[tok] = finite_logprob(lp);
      }
      top_logprobs.push_back(std::move(top));
    }
    text_offset.push_back(offset);
    offset += e.token.size();
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(text_offset)}};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json base(const ResponseMeta& meta, const char* object) {
  return {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model}};
}

}  // namespace

std::string render_error(const ApiError& e) {
  return dump({{"error",
                {{"message", e.message},
                 {"type", e.type},
                 {"param", null_or(e.param)},
                 {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}});
}

std::string render_response(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices, const Usage& usage) {
  const bool chat = meta.kind == ApiKind::Chat;
  json out = base(meta, chat ? "chat.completion" : "text_completion");
  json arr = json::array();
  for (const auto& c : choices) {
    json choice = {{"index", c.index}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
      if (!c.tool_calls.empty()) {
        json calls = json::array();
        for (const ToolCallView& t : c.tool_calls) {
          calls.push_back({{"id", t.id}, {"type", "function"},
                           {"function", {{"name", t.name}, {"arguments", t.arguments}}}});
        }
        choice["message"]["tool_calls"] = std::move(calls);
        if (c.text.empty()) choice["message"]["content"] = nullptr;
      }
      if (c.reasoning) {  // both names: reasoning_content (DeepSeek, llama.cpp, older vLLM) and reasoning (vLLM)
        const json r = c.reasoning->empty() ? json(nullptr) : json(*c.reasoning);
        choice["message"]["reasoning_content"] = r;
        choice["message"]["reasoning"] = r;
      }
      choice["logprobs"] = c.with_logprobs ? chat_logprobs(c.logprobs) : json(nullptr);
    } else {
      choice["text"] = c.text;
      choice["logprobs"] = c.with_logprobs ? completion_logprobs(c.logprobs, 0) : json(nullptr);
    }
    choice["finish_reason"] = null_or(c.finish_reason);
    choice["stop_reason"] = null_or(c.stop_reason);
    arr.push_back(std::move(choice));
  }
  out["choices"] = std::move(arr);
  out["usage"] = usage_json(usage);
  return dump(out);
}

std::string render_chunk(const ResponseMeta& meta, const ChoiceDelta& d, bool with_usage_field) {
  const bool chat = meta.kind == ApiKind::Chat;
  json out = base(meta, chat ? "chat.completion.chunk" : "text_completion");
  json choice = {{"index", d.index}};
  if (chat) {
    json delta = json::object();
    if (d.role) {
      delta["role"] = "assistant";
      delta["content"] = "";
    } else if (!d.text.empty()) {
      delta["content"] = d.text;
    }
    if (!d.reasoning.empty()) {
      delta["reasoning_content"] = d.reasoning;
      delta["reasoning"] = d.reasoning;
    }
    if (!d.tool_calls.empty()) {  // each call whole: id, type, name and all its arguments in this one delta
      json calls = json::array();
      for (const auto& [index, t] : d.tool_calls) {
        calls.push_back({{"index", index}, {"id", t.id}, {"type", "function"},
                         {"function", {{"name", t.name}, {"arguments", t.arguments}}}});
      }
      delta["tool_calls"] = std::move(calls);
    }
    choice["delta"] = std::move(delta);
    choice["logprobs"] = d.with_logprobs && !d.logprobs.empty() ? chat_logprobs(d.logprobs) : json(nullptr);
  } else {
    choice["text"] = d.text;
    choice["logprobs"] = d.with_logprobs && !d.logprobs.empty() ? completion_logprobs(d.logprobs, d.text_offset)
                                                                : json(nullptr);
  }
  choice["finish_reason"] = d.finish_reason ? json(*d.finish_reason) : json(nullptr);
  if (d.finish_reason) choice["stop_reason"] = null_or(d.stop_reason);
  out["choices"] = json::array({std::move(choice)});
  if (with_usage_field) out["usage"] = nullptr;
  return dump(out);
}

std::string render_usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  json out = base(meta, meta.kind == ApiKind::Chat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return dump(out);
}

namespace {

// A LoRA adapter's entry names the base model as its parent (vLLM's listing), and its id for llama-server's
// per-request `lora` field.
json model_entry(const ModelInfo& model, const std::string& id, int context_length,
                 const ServedAdapter* adapter = nullptr) {
  json entry{{"id", id},
             {"object", "model"},
             {"created", model.created},
             {"owned_by", model.owned_by},
             {"root", model.id},
             {"max_model_len", context_length}};
  if (adapter != nullptr) {
    entry["root"] = id;
    entry["parent"] = model.id;
    entry["lora_id"] = adapter->id - 1;
  }
  return entry;
}

}  // namespace

std::string render_models(const std::vector<ModelListing>& models) {
  json data = json::array();
  for (const ModelListing& m : models) {
    if (m.served) {
      data.push_back(model_entry(*m.model, m.model->id, m.context_length));
      for (const auto& alias : m.model->aliases) data.push_back(model_entry(*m.model, alias, m.context_length));
    }
    for (const auto& a : m.adapters) data.push_back(model_entry(*m.model, a.name, m.context_length, &a));
  }
  return dump({{"object", "list"}, {"data", std::move(data)}});
}

std::string render_model(const ModelInfo& model, const std::string& id, int context_length,
                         const std::optional<ServedAdapter>& adapter) {
  return dump(model_entry(model, id, context_length, adapter ? &*adapter : nullptr));
}

std::string render_tokenize(const std::vector<int32_t>& tokens, int context_length) {
  return dump({{"tokens", tokens}, {"count", tokens.size()}, {"max_model_len", context_length}});
}

std::string render_detokenize(const std::string& text) { return dump({{"prompt", text}}); }

std::string render_health(const char* status, const std::string& error) {
  json j{{"status", status}};
  if (!error.empty()) j["error"] = error;
  return dump(j);
}

}  // namespace kairo::server
