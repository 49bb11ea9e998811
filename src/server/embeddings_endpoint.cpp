// POST /v1/embeddings: OpenAI's embeddings API, for a model whose GGUF declares how to pool its hidden states
// (Qwen3-Embedding: the last token's; gte-Qwen2: the mean). Each input becomes an engine request that computes its
// prompt in the continuous batch, beside generation, and ends with its vector (engine::Request::embedding); a
// GenerationJob collects them, so queue limits, tenant limits, client disconnects and shutdown work as for
// completions.
#include "core/format.h"
#include "server/endpoints.h"
#include "server/generation_job.h"
#include "server/lora_selection.h"
#include "server/openai/embeddings_writer.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

void handle_embeddings(const std::shared_ptr<ServerContext>& ctx_ptr, const Backend& backend, const HttpRequest& req,
                       const Caller& caller, std::shared_ptr<Exchange> exchange) {
  const ServerContext& ctx = *ctx_ptr;
  auto body = parse_json_body(req.body, ctx.config.limits.max_json_depth);
  if (!body.ok()) return exchange->send_error(body.error());
  auto parsed = parse_embeddings_request(*body, ParseContext{ctx.config.limits, backend.engine->n_vocab()});
  if (!parsed.ok()) return exchange->send_error(parsed.error());
  GenerationParams params;
  params.model = parsed->model;
  auto adapter = choose_permitted_adapter(ctx, *backend.model, caller, params);
  if (!adapter.ok()) return exchange->send_error(adapter.error());
  const ModelInfo& model = backend.model->info;
  if (model.pooling == engine::EmbeddingPooling::None) {
    ApiError e = api_error(400,
                           strprintf("model '%s' does not produce embeddings: its GGUF declares no pooling type (%s); "
                                     "serve an embedding model (one whose pooling is mean, cls or last, such as "
                                     "Qwen3-Embedding) for /v1/embeddings",
                                     model.id.c_str(), model.pooling_key.c_str()),
                           "model_not_embedding");
    e.param = "model";
    return exchange->send_error(e);
  }

  if (parsed->dimensions > model.embedding_dim) {
    return exchange->send_error(invalid_param(
        "dimensions", strprintf("'dimensions' is %d, but this model's embeddings have %d values; ask for at most %d",
                                parsed->dimensions, model.embedding_dim, model.embedding_dim)));
  }

  // Text is the user's, never markup: special tokens in it are not parsed. The model's own BOS and EOS are added as its
  // tokenizer says (Qwen3-Embedding pools the EOS it appends).
  const tokenizer::Tokenizer& tok = *backend.tokenizer;
  const int context = backend.engine->context_length();
  const bool add_eos = tok.add_eos_by_default() && tok.eos_id() >= 0;
  std::vector<engine::Request> requests;
  requests.reserve(parsed->inputs.size());
  int64_t n_prompt_tokens = 0;
  for (size_t i = 0; i < parsed->inputs.size(); ++i) {
    Prompt& input = parsed->inputs[i];
    std::vector<int32_t> tokens = std::move(input.tokens);
    bool past_context = false;
    if (input.is_text) {
      const size_t room = static_cast<size_t>(std::max(context - (add_eos ? 1 : 0), 0));
      tokenizer::Tokenizer::Bounded b = tok.encode_at_most(input.text, tok.add_bos_by_default(), false, room);
      tokens = std::move(b.tokens);
      past_context = b.stopped;
      if (add_eos) tokens.push_back(tok.eos_id());
    }
    if (past_context || static_cast<int>(tokens.size()) > context) {
      const std::string param = parsed->inputs.size() == 1 ? "input" : strprintf("input[%zu]", i);
      return exchange->send_error(invalid_param(
          param,
          strprintf("This model's maximum context length is %d tokens. However, %s has %s tokens. Please shorten it.",
                    context, param.c_str(),
                    past_context ? strprintf("more than %d", context).c_str() : std::to_string(tokens.size()).c_str()),
          "context_length_exceeded"));
    }
    n_prompt_tokens += static_cast<int64_t>(tokens.size());
    engine::Request r;
    r.prompt_tokens = std::move(tokens);
    r.embedding = model.pooling;
    r.normalize_embedding = true;
    r.tenant = caller.name();
    r.tenant_weight = caller.weight();
    r.adapter = adapter->id;
    r.adapter_generation = adapter->generation;
    r.adapter_scale = adapter->scale;
    requests.push_back(std::move(r));
  }
  auto admitted = ctx.tenant_usage.admit(caller.tenant, n_prompt_tokens);
  if (const auto* refusal = std::get_if<TenantRefusal>(&admitted)) {
    return exchange->send_error(tenant_refusal_error(*refusal, ctx.config.retry_after_s));
  }
  GenerationOptions options;
  options.writer = std::make_unique<EmbeddingsWriter>(response_model(*backend.model, parsed->model), parsed->base64,
                                                      parsed->dimensions);
  options.tenant = std::move(std::get<TenantLease>(admitted));
  GenerationJob::start(ctx_ptr, backend, std::move(exchange), std::move(options), std::move(requests));
}

}  // namespace kairo::server
