// POST /v1/completions and /v1/chat/completions: validated request -> prompt tokens -> context check -> engine
// requests -> GenerationJob. submit_chat is the chat path /v1/messages and /v1/responses share.
#include <algorithm>

#include "core/format.h"
#include "server/endpoints.h"
#include "server/generation_job.h"
#include "server/lora_selection.h"
#include "server/openai/completion_writer.h"
#include "server/openai/parse_request.h"
#include "server/response_ids.h"
#include "server/tool_grammar.h"

namespace kairo::server {

namespace {

// A prompt's token ids. A text prompt is tokenized only up to the context length (Tokenizer::encode_at_most):
// one longer cannot be served whatever max_tokens is, and tokenizing megabytes just to count them cost the server
// about half a second of CPU per 8 MB request.
struct PromptTokens {
  std::vector<int32_t> tokens;
  bool past_context = false;  // tokenizing stopped past the context length: the prompt has more tokens than these
};

PromptTokens tokenize_prompt(const tokenizer::Tokenizer& tok, std::string_view text, bool add_bos,
                             int context_length) {
  tokenizer::Tokenizer::Bounded b =
      tok.encode_at_most(text, add_bos, /*parse_special=*/true, static_cast<size_t>(std::max(context_length, 0)));
  return PromptTokens{std::move(b.tokens), b.stopped};
}

// The numbers in the message, as OpenAI words it, so the client knows what to cut. A prompt whose tokenizing
// stopped past the context has no exact count, only a bound.
std::optional<ApiError> check_context(int context_length, int n_prompt, int max_tokens, bool is_chat,
                                      bool past_context, const std::string& max_tokens_field) {
  if (!past_context && n_prompt + max_tokens <= context_length) return std::nullopt;
  const char* what = is_chat ? "messages" : "prompt";
  const bool no_room = past_context || n_prompt >= context_length;
  const std::string prompt_size = past_context ? strprintf("more than %d", context_length) : std::to_string(n_prompt);
  std::string message =
      no_room ? strprintf("This model's maximum context length is %d tokens. However, your %s is %s tokens, which "
                          "leaves no room for the completion. Please shorten your %s.",
                          context_length, what, prompt_size.c_str(), what)
              : strprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in "
                          "the %s, %d for the completion). Please reduce the length of the %s or the completion "
                          "(%s).",
                          context_length, n_prompt + max_tokens, n_prompt, what, max_tokens, what,
                          max_tokens_field.c_str());
  return invalid_param(no_room ? what : max_tokens_field, std::move(message), "context_length_exceeded");
}

engine::Request make_engine_request(const GenerationParams& p, std::vector<int32_t> prompt, int max_tokens,
                                    int choice_in_prompt) {
  engine::Request r;
  r.prompt_tokens = std::move(prompt);
  r.sampling = p.sampling;
  // n choices from one seed must differ, yet stay reproducible.
  if (r.sampling.seed) r.sampling.seed = *r.sampling.seed + static_cast<uint64_t>(choice_in_prompt);
  r.stop.max_tokens = max_tokens;
  r.stop.stop_strings = p.stop;
  r.stop.stop_token_ids = p.stop_token_ids;
  r.stop.ignore_eos = p.ignore_eos;
  r.priority = p.priority;
  r.speculative = p.speculative;
  return r;
}

// Shared tail of every generation endpoint: context check per prompt, n engine requests per prompt, the job.
// `writer` null: OpenAI's completions or chat shape, by `kind`.
void submit_generation(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend, const Caller& caller,
                       std::shared_ptr<Exchange> exchange, const GenerationParams& params,
                       std::vector<PromptTokens> prompts, ApiKind kind, bool reasoning_opened = false,
                       ToolCallOptions tool_calls = {}, std::unique_ptr<ResponseWriter> writer = nullptr) {
  const ServerContext& ctx = *ctx_ptr;
  const int context_length = backend.engine->context_length();
  // The adapter `model` and `lora` select, which the key must be allowed to use (lora_selection.h).
  auto adapter = choose_permitted_adapter(ctx, *backend.model, caller, params);
  if (!adapter.ok()) return exchange->send_error(adapter.error());
  std::shared_ptr<grammar::StackArena> grammar;
  if (!params.grammar.empty()) {
    auto compiled = ctx.grammars.get(params.grammar, params.grammar_param, params.grammar_root);
    if (!compiled.ok()) return exchange->send_error(compiled.error());
    grammar = std::move(*compiled);
  }
  using Format = ServerConfig::ReasoningFormat;
  const bool split_reasoning = kind == ApiKind::Chat &&
                               (ctx.config.reasoning_format == Format::Deepseek ||
                                (ctx.config.reasoning_format == Format::Auto && backend.template_traits.thinks));
  // An output constraint applies to the answer, not to the thinking before it, where the markers are single tokens
  // (Qwen3, DeepSeek-R1); elsewhere it applies from the first token.
  engine::Request::Thinking thinking;
  if (grammar && split_reasoning) {
    const int32_t open = backend.tokenizer->find_token("<think>"), close = backend.tokenizer->find_token("</think>");
    if (open >= 0 && close >= 0) thinking = {open, close, reasoning_opened};
  }
  std::vector<engine::Request> requests;
  requests.reserve(prompts.size() * params.n);
  int64_t n_prompt_tokens = 0;  // each prompt once, as usage counts them (its n choices share one prefill)
  for (auto& [prompt, past_context] : prompts) {
    const int n_prompt = static_cast<int>(prompt.size());
    int max_tokens = params.max_tokens.value_or(0);
    if (!params.max_tokens) {
      // OpenAI's defaults: 16 for completions; chat may use the rest of the context (capped by the server limit).
      max_tokens = kind == ApiKind::Completion ? 16 : std::max(1, context_length - n_prompt);
      if (kind == ApiKind::Chat && ctx.config.limits.max_tokens > 0) {
        max_tokens = std::min(max_tokens, ctx.config.limits.max_tokens);
      }
    }
    if (auto e = check_context(context_length, n_prompt, max_tokens, kind == ApiKind::Chat, past_context,
                               params.max_tokens_field)) {
      return exchange->send_error(*e);
    }
    n_prompt_tokens += n_prompt;
    for (int i = 0; i < params.n; ++i) {
      requests.push_back(make_engine_request(params, prompt, max_tokens, i));
      requests.back().grammar = grammar;
      requests.back().grammar_after_thinking = thinking;
      requests.back().tenant = caller.name();
      requests.back().tenant_weight = caller.weight();
      requests.back().adapter = adapter->id;
      requests.back().adapter_generation = adapter->generation;
      requests.back().adapter_scale = adapter->scale;
    }
  }
  // The tenant's limits last: a request refused for another reason takes no seat and no tokens.
  auto admitted = ctx.tenant_usage.admit(caller.tenant, n_prompt_tokens);
  if (const auto* refusal = std::get_if<TenantRefusal>(&admitted)) {
    return exchange->send_error(tenant_refusal_error(*refusal, ctx.config.retry_after_s));
  }
  GenerationOptions options;
  if (!writer) {
    ResponseMeta meta{kind, random_hex_id(kind == ApiKind::Chat ? "chatcmpl-" : "cmpl-"), unix_now(),
                      response_model(*backend.model, params.model)};
    writer = std::make_unique<CompletionWriter>(std::move(meta), params.include_usage);
  }
  options.writer = std::move(writer);
  options.stream = params.stream;
  options.logprobs = params.logprobs;
  options.n_per_prompt = params.n;
  options.split_reasoning = split_reasoning;
  options.reasoning_opened = reasoning_opened;
  options.tool_calls = std::move(tool_calls);
  options.tenant = std::move(std::get<TenantLease>(admitted));
  GenerationJob::start(ctx_ptr, backend, std::move(exchange), std::move(options), std::move(requests));
}

}  // namespace

int adapter_index(const ModelInfo& model, const std::string& name) {
  if (name.empty() || name == model.id) return 0;
  if (std::find(model.aliases.begin(), model.aliases.end(), name) != model.aliases.end()) return 0;
  const auto it = std::find(model.adapters.begin(), model.adapters.end(), name);
  return it == model.adapters.end() ? -1 : 1 + static_cast<int>(it - model.adapters.begin());
}

std::optional<ApiError> check_model_name(const ServedModel& model, const std::string& name) {
  if (is_base_model_name(model.info, name) || model.loras.find(name)) return std::nullopt;
  return unknown_model_error(model.info, name);
}

std::string response_model(const ServedModel& model, const std::string& requested) {
  return requested.empty() ? model.info.id : requested;
}

std::vector<std::string> served_names(const ModelInfo& model) {
  std::vector<std::string> names = {model.id};
  names.insert(names.end(), model.aliases.begin(), model.aliases.end());
  return names;
}

std::optional<ApiError> check_tenant_model(const ServerContext& ctx, const ServedModel& served, const Caller& caller,
                                           const std::string& model) {
  if (!caller.tenant) return std::nullopt;
  const Tenant& t = *caller.tenant;
  if (may_use_model(t, model, served_names(served.info))) return std::nullopt;
  ctx.tenant_usage.count_refusal(t.name, TenantLimit::Model);
  // In single quotes, as the key's name; escaped like every client string in an error.
  auto quoted = [](const std::string& s) {
    const std::string q = quote_for_error(s, 64);
    return "'" + q.substr(1, q.size() - 2) + "'";
  };
  std::string allowed;
  for (const auto& name : t.models) allowed += (allowed.empty() ? "" : ", ") + quoted(name);
  ApiError e = api_error(403,
                         strprintf("key '%s' may not use model %s; it may use: %s", t.name.c_str(),
                                   quoted(model.empty() ? served.info.id : model).c_str(), allowed.c_str()),
                         "model_not_allowed");
  e.param = "model";
  return e;
}

namespace {

bool ends_with_open_think(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == '\t')) --end;
  constexpr std::string_view kOpen = "<think>";
  return end >= kOpen.size() && std::string_view(text).substr(end - kOpen.size(), kOpen.size()) == kOpen;
}

// The messages with each call's arguments as JSON text again, for templates that concatenate them.
nlohmann::ordered_json arguments_as_text(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json copy = messages;
  for (auto& m : copy) {
    if (!m.contains("tool_calls")) continue;
    for (auto& call : m["tool_calls"]) {
      auto& args = call["function"]["arguments"];
      if (args.is_object()) args = args.dump();
    }
  }
  return copy;
}

}  // namespace

ApiResult<ChatPrompt> chat_prompt_tokens(const Backend& backend, const ChatRequest& chat, size_t max_tokens) {
  const ChatTemplate& tmpl = backend.chat_template;
  static const ChatTemplate fallback = chatml_template();
  const nlohmann::ordered_json no_tools;
  nlohmann::ordered_json with_text_arguments;
  if (backend.template_traits.arguments_as_text) with_text_arguments = arguments_as_text(chat.messages);
  const nlohmann::ordered_json& messages =
      backend.template_traits.arguments_as_text ? with_text_arguments : chat.messages;
  ChatTemplateInput input{messages, chat.tools.is_null() ? no_tools : chat.tools, chat.add_generation_prompt,
                          chat.template_kwargs};
  auto rendered = tmpl ? tmpl(input) : fallback(input);
  if (!rendered.ok()) {
    return invalid_param("messages", "the model's chat template rejected the conversation: " +
                                         rendered.error().message);
  }
  std::string text = std::move(rendered).value();
  if (chat.continue_final_message) {
    // The template closes the last message; cut after its content so the model continues it.
    const nlohmann::ordered_json& content = chat.messages.back().at("content");
    const std::string last = content.is_string() ? content.get<std::string>() : std::string();
    const size_t pos = last.empty() ? std::string::npos : text.rfind(last);
    if (pos != std::string::npos) text.resize(pos + last.size());
  }
  const tokenizer::Tokenizer& tok = *backend.tokenizer;
  bool add_bos = tok.add_bos_by_default() && tok.bos_id() >= 0;
  if (add_bos) {
    const std::string& bos_text = tok.token_text(tok.bos_id());
    if (!bos_text.empty() && text.compare(0, bos_text.size(), bos_text) == 0) add_bos = false;
  }
  ChatPrompt prompt;
  tokenizer::Tokenizer::Bounded tokens = tok.encode_at_most(text, add_bos, /*parse_special=*/true, max_tokens);
  prompt.tokens = std::move(tokens.tokens);
  prompt.past_limit = tokens.stopped;
  if (prompt.tokens.empty() && !prompt.past_limit) {
    return invalid_param("messages", "the conversation renders to an empty prompt");
  }
  prompt.opens_thinking = ends_with_open_think(text);
  return prompt;
}

void handle_completions(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend,
                        const HttpRequest& req, const Caller& caller, std::shared_ptr<Exchange> exchange) {
  const ServerContext& ctx = *ctx_ptr;
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange->send_error(body.error());
  auto parsed = parse_completion_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange->send_error(parsed.error());
  // The model, the adapter `lora` selects, and whether the key may use what runs (lora_selection.h).
  if (auto adapter = choose_permitted_adapter(ctx, *backend.model, caller, parsed->params); !adapter.ok()) {
    return exchange->send_error(adapter.error());
  }

  const tokenizer::Tokenizer& tok = *backend.tokenizer;
  std::vector<PromptTokens> prompts;
  for (auto& p : parsed->prompts) {
    if (p.is_text) {
      prompts.push_back(tokenize_prompt(tok, p.text, tok.add_bos_by_default(), backend.engine->context_length()));
    } else {
      prompts.push_back(PromptTokens{std::move(p.tokens)});
    }
  }
  submit_generation(ctx_ptr, backend, caller, std::move(exchange), parsed->params, std::move(prompts),
                    ApiKind::Completion);
}

void handle_chat_completions(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend,
                             const HttpRequest& req, const Caller& caller, std::shared_ptr<Exchange> exchange) {
  const ServerContext& ctx = *ctx_ptr;
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange->send_error(body.error());
  auto parsed = parse_chat_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange->send_error(parsed.error());
  submit_chat(ctx_ptr, backend, caller, std::move(exchange), std::move(*parsed));
}

void submit_chat(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend, const Caller& caller,
                 std::shared_ptr<Exchange> exchange, ChatRequest chat, std::unique_ptr<ResponseWriter> writer) {
  const ServerContext& ctx = *ctx_ptr;
  // The model, the adapter `lora` selects, and whether the key may use what runs (lora_selection.h).
  if (auto adapter = choose_permitted_adapter(ctx, *backend.model, caller, chat.params); !adapter.ok()) {
    return exchange->send_error(adapter.error());
  }
  // Tokenized up to the context length only (see PromptTokens); submit_generation refuses a longer one.
  auto prompt =
      chat_prompt_tokens(backend, chat, static_cast<size_t>(std::max(backend.engine->context_length(), 0)));
  if (!prompt.ok()) return exchange->send_error(prompt.error());
  // Tools: calls are parsed in the template's format unless tool_choice is "none"; "required" and a named function
  // are enforced by a grammar, and so is any call "auto" opens (where the format marks its calls).
  const ToolCallFormat format = backend.template_traits.tool_calls;
  const bool with_tools = !chat.tools.is_null() && chat.tool_choice != "none";
  if (with_tools && (chat.tool_choice == "required" || chat.tool_choice == "function")) {
    if (!chat.params.grammar.empty()) {
      return exchange->send_error(invalid_param("tool_choice", "a 'tool_choice' that forces a call cannot be combined "
                                                               "with an output constraint ('" +
                                                                   chat.params.grammar_param + "')"));
    }
    auto g = tool_choice_grammar(chat, format);
    if (!g.ok()) return exchange->send_error(g.error());
    chat.params.grammar = std::move(g->gbnf);
    chat.params.grammar_root = std::move(g->root);
    chat.params.grammar_param = "tool_choice";
  } else if (with_tools && chat.params.grammar.empty()) {
    // "auto": the model may answer in text, but a call it opens is held to the tools' schemas.
    if (std::optional<ToolGrammar> g = tool_auto_grammar(chat, format)) {
      chat.params.grammar = std::move(g->gbnf);
      chat.params.grammar_root = std::move(g->root);
      chat.params.grammar_param = "tools";
    }
  }
  std::vector<PromptTokens> prompts;
  prompts.push_back(PromptTokens{std::move(prompt->tokens), prompt->past_limit});
  submit_generation(ctx_ptr, backend, caller, std::move(exchange), chat.params, std::move(prompts), ApiKind::Chat,
                    prompt->opens_thinking,
                    with_tools ? ToolCallOptions{format, std::make_shared<const nlohmann::ordered_json>(chat.tools)}
                               : ToolCallOptions{},
                    std::move(writer));
}

void handle_tokenize(ServerContext& ctx, const Backend& backend, const HttpRequest& req, Exchange& exchange) {
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange.send_error(body.error());
  auto parsed = parse_tokenize_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange.send_error(parsed.error());
  std::vector<int32_t> tokens;
  if (parsed->is_chat) {
    auto chat_tokens = chat_prompt_tokens(backend, parsed->chat);
    if (!chat_tokens.ok()) return exchange.send_error(chat_tokens.error());
    tokens = std::move(chat_tokens->tokens);
  } else {
    const auto& tok = *backend.tokenizer;
    tokens = tok.encode(parsed->prompt, parsed->add_special_tokens && tok.add_bos_by_default(),
                        /*parse_special=*/true);
  }
  exchange.send_json(200, render_tokenize(tokens, backend.engine->context_length()));
}

void handle_detokenize(ServerContext& ctx, const Backend& backend, const HttpRequest& req, Exchange& exchange) {
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange.send_error(body.error());
  auto parsed = parse_detokenize_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange.send_error(parsed.error());
  exchange.send_json(200, render_detokenize(backend.tokenizer->detokenize(parsed->tokens)));
}

}  // namespace kairo::server
