// `kairo serve --model M [--port 8080]`: the OpenAI-compatible HTTP server. It listens at once (GET /health says
// 503 "loading" until the engine is up), loads the model, prints the memory plan, serves, and on SIGTERM/SIGINT
// finishes or cancels in-flight requests within --shutdown-timeout, then exits 0. SIGHUP reloads --api-keys-file.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "core/format.h"
#include "device_option.h"
#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "lora_options.h"
#include "model/model.h"
#include "plan/device_catalog.h"
#include "plan/memory_plan.h"
#include "plan/model_shapes.h"
#include "plan/system_memory.h"
#include "serve_args.h"
#include "server/auth.h"
#include "server/chat_template_loader.h"
#include "server/endpoints.h"
#include "server/server.h"
#include "speculative_options.h"
#include "terminal/notes.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {

namespace {

// The LoRA adapters' device memory, as `kairo plan --lora ... --max-loras --max-lora-rank` counts it
// (plan/adapter_memory.h): the --lora files' bytes from their headers and, with --allow-runtime-lora, room for the
// rest of --max-loras at --max-lora-rank, which the engine then holds runtime loads to (EngineConfig::max_lora_bytes).
Result<plan::AdapterMemory> lora_memory(const model::ModelConfig& c, const ServeArgs& a) {
  plan::AdapterMemoryRequest r;
  for (const std::string& text : a.loras) {
    KAIRO_TRY_ASSIGN(const LoraSpec spec, parse_lora_spec(text, /*named=*/true));
    KAIRO_TRY_ASSIGN(const gguf::File file, gguf::File::open(spec.path));
    r.loaded.push_back(plan::adapter_size(plan::tensors_from_file(file)));
  }
  r.runtime_loads = a.server.allow_runtime_lora;
  r.max_loras = a.max_loras;
  r.max_lora_rank = a.max_lora_rank;
  r.max_batch_tokens = a.max_num_batched_tokens;
  return plan::adapter_memory(c, r);
}

// From the model's header, config and the device it goes to (before or after its load): several models are planned
// before any is loaded. already_mapped: bytes of this model already mapped by this process (plan/system_memory.h).
}  // namespace

Result<KvPlan> plan_kv_pool(const model::ModelConfig& c, const gguf::File& file, const kernels::Device& dev,
                            const ServeArgs& a, const model::Model* draft, uint64_t already_mapped) {
  if (a.max_model_len > c.context_length) {
    return Error{strprintf("--max-model-len %d is larger than the model's context length of %d tokens; use at most "
                           "%d",
                           a.max_model_len, c.context_length, c.context_length)};
  }
  if (a.kv_cache_mib > 0 && a.mem_budget_gb > 0) {
    return Error{"give --kv-cache-memory (the KV cache alone) or --mem-budget-gb (everything), not both"};
  }
  KAIRO_TRY_ASSIGN(const DType kv_dtype, plan::parse_kv_dtype(a.kv_dtype));
  plan::PlanRequest req;
  req.context_length = a.max_model_len > 0 ? a.max_model_len : c.context_length;
  req.concurrency = a.max_num_seqs;
  req.kv_dtype = kv_dtype;
  req.kv_block_size = a.block_size;
  req.max_batch_tokens = a.max_num_batched_tokens;
  req.knobs = plan::KvKnobNames{};  // the server's flag names
  KvPlan out;
  plan::DeviceSpec device;
  if (a.mem_budget_gb > 0) {
    device = plan::cpu_device(plan::CpuMeasurement{});
    device.memory_bytes = static_cast<uint64_t>(a.mem_budget_gb * (1ull << 30));
    device.usable_fraction = 1.0;
    out.budget_source = "--mem-budget-gb";
  } else if (!dev.host_memory()) {
    // The device's own memory; the weights already on it are counted by the planner like on the CPU, so the
    // budget starts from the total, not from what is free now.
    const kernels::DeviceMemoryInfo mem = dev.memory_info();
    device = plan::cpu_device(plan::CpuMeasurement{.mem_available_bytes = mem.total_bytes});
    device.name = device.description = dev.name();
    device.unified_memory = false;
    out.budget_source = strprintf("%.0f %% of %s's %s", device.usable_fraction * 100, device.name.c_str(),
                                  human_bytes(mem.total_bytes).c_str());
  } else {
    // The weights are mapped already and the plan counts them again: under `ulimit -v` they come back.
    KAIRO_TRY_ASSIGN(const plan::MemoryHeadroom avail, plan::read_memory_headroom(already_mapped));
    device = plan::cpu_device(plan::CpuMeasurement{.mem_available_bytes = avail.bytes});
    out.budget_source = strprintf("%.0f %% of %s available, set by %s", device.usable_fraction * 100,
                                  human_bytes(avail.bytes).c_str(), avail.limited_by.c_str());
  }
  const plan::WeightsSummary weights = plan::summarize_weights(plan::tensors_from_file(file), plan::expert_fraction(c));
  if (draft) {  // its weights, and its KV pool of as many token slots as the model's (as `kairo plan` counts them)
    KAIRO_TRY_ASSIGN(req.draft, plan::draft_model_spec(draft->config(), plan::tensors_from_file(draft->file()),
                                                       kv_dtype));
  }
  KAIRO_TRY_ASSIGN(out.adapters, lora_memory(c, a));
  req.adapters = out.adapters;
  out.request = plan::kv_pool_request(c, weights, device, req);
  out.request.knobs.budget_scale = 1.0;  // --mem-budget-gb is the budget itself, not a device's memory
  if (a.kv_cache_mib > 0) {
    out.request = plan::kv_cache_budget_request(out.request, static_cast<uint64_t>(a.kv_cache_mib * 1024.0 * 1024.0));
    out.request.knobs.budget = "--kv-cache-memory";
    out.budget_source = "--kv-cache-memory";
  }
  KAIRO_TRY_ASSIGN(out.sizing, plan::size_kv_pool(c, out.request));
  // Each layer's K (and V) is one device buffer: a device with a binding limit (128 MiB on lavapipe) caps the pool.
  const uint64_t block_bytes = static_cast<uint64_t>(a.block_size) * row_bytes(kv_dtype, c.kv_dim());
  const int64_t max_blocks = static_cast<int64_t>(dev.max_allocation_bytes() / block_bytes) - 1;
  if (out.sizing.n_blocks > max_blocks) {
    std::fprintf(stderr, "kairo serve: %s holds at most %s per buffer: the KV pool is capped at %lld blocks\n",
                 dev.name().c_str(), human_bytes(dev.max_allocation_bytes()).c_str(),
                 static_cast<long long>(max_blocks));
    out.sizing.n_blocks = max_blocks;
  }
  return out;
}

Result<EngineHolder> make_engine(model::Model& model, const tokenizer::Tokenizer& tok, const ServeArgs& a,
                                 const KvPlan& kv, model::Model* draft) {
  engine::EngineConfig config;
  config.n_threads = a.threads;
  config.scheduler.max_num_seqs = a.max_num_seqs;
  config.scheduler.max_num_batched_tokens = a.max_num_batched_tokens;
  config.scheduler.fair_min_chunk = a.fair_min_chunk;
  if (!a.server.api_keys_file.empty()) {
    config.scheduler.fair_solo_budget =
        a.fair_solo_tokens >= 0 ? a.fair_solo_tokens : std::max(1, a.max_num_batched_tokens / 4);
  }
  config.block_size = a.block_size;
  config.max_model_len = kv.request.max_model_len;
  config.kv_dtype = kv.request.kv_dtype;
  config.n_kv_blocks = kv.sizing.n_blocks;
  config.max_waiting = a.max_waiting;
  config.enable_prefix_caching = !a.no_prefix_caching;
  config.exact_numerics = a.exact_numerics;
  config.max_loras = a.max_loras;
  config.max_lora_rank = a.max_lora_rank;
  config.max_lora_bytes = kv.adapters.adapters_bytes();
  KAIRO_TRY_ASSIGN(config.speculative, speculative_config(a.speculative, draft));
  KAIRO_TRY_ASSIGN(auto engine, engine::Engine::create(model, tok, config));
  return EngineHolder{std::move(engine)};
}

// Whether the model serves /v1/embeddings, from its header (the server answers before the weights are loaded). A
// header that does not read is left to the load, which says what is wrong with it.
void describe_embeddings(const std::string& path, server::ModelInfo& info) {
  auto header = gguf::File::open(path);
  if (!header.ok()) return;
  auto config = model::read_config(*header);
  if (!config.ok()) return;
  info.pooling = static_cast<engine::EmbeddingPooling>(config->pooling);
  info.pooling_key = config->arch + ".pooling_type";
  info.embedding_dim = config->dim;
}

namespace {

int run_serve(ServeArgs a) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };
  // The server's own settings first: one model or several, the server is configured alike.
  a.server.reasoning_format = a.reasoning_format == "deepseek" ? server::ServerConfig::ReasoningFormat::Deepseek
                              : a.reasoning_format == "none"   ? server::ServerConfig::ReasoningFormat::None
                                                               : server::ServerConfig::ReasoningFormat::Auto;
  if (!a.api_key_file.empty()) {
    auto keys = server::load_api_key_file(a.api_key_file);
    if (!keys.ok()) return fail(keys.error().message);
    a.server.api_keys.insert(a.server.api_keys.end(), keys->begin(), keys->end());
  }
  auto sources = model_sources(a);
  if (!sources.ok()) return fail(sources.error().message);
  if (sources->size() > 1 || !a.models_dir.empty()) return run_serve_models(a, *sources);
  if (!sources->empty()) {
    a.model = (*sources)[0].path;
    if (a.served_names.empty() && (*sources)[0].name != std::filesystem::path(a.model).stem().string()) {
      a.served_names.push_back((*sources)[0].name);  // --model NAME=PATH
    }
  }
  server::ModelInfo info;
  info.id = a.served_names.empty() ? std::filesystem::path(a.model).stem().string() : a.served_names[0];
  if (a.served_names.size() > 1) info.aliases.assign(a.served_names.begin() + 1, a.served_names.end());
  describe_embeddings(a.model, info);
  std::vector<LoraSpec> loras;
  for (const std::string& text : a.loras) {
    auto spec = parse_lora_spec(text, /*named=*/true);
    if (!spec.ok()) return fail(spec.error().message);
    if (server::adapter_index(info, spec->name) >= 0) {
      return fail("--lora " + text + ": the name " + spec->name + " is already served; give each adapter its own name");
    }
    info.adapters.push_back(spec->name);
    loras.push_back(*spec);
  }
  if (static_cast<int>(loras.size()) > a.max_loras) {
    return fail(strprintf("--lora gives %zu adapters but --max-loras is %d; raise --max-loras", loras.size(),
                          a.max_loras));
  }
  info.created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();

  server::Server srv(a.server, info);
  if (auto s = srv.start(); !s.ok()) return fail(s.error().message);
  if (!a.server.api_keys_file.empty()) {
    note("kairo serve: API keys from %s (reloaded on SIGHUP)\n", a.server.api_keys_file.c_str());
  }
  note("kairo serve: listening on %s://%s:%d (loading %s)\n", a.server.ssl_certfile.empty() ? "http" : "https",
       a.server.host.c_str(), srv.port(), a.model.c_str());

  auto model = load_model_on(a.model, a.device);
  if (!model.ok()) return fail(model.error().message);
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  if (!tok.ok()) return fail(tok.error().message);
  const tokenizer::Tokenizer& tk = **tok;

  auto chat_template = server::load_chat_template((*model)->file(), tk, a.chat_template_file);
  if (!chat_template.ok()) return fail(chat_template.error().message);
  if (!chat_template->render) {
    note("kairo serve: the model has no chat template; /v1/chat/completions uses ChatML\n");
  }

  for (const LoraSpec& spec : loras) {  // adapter i + 1 of the engine is info.adapters[i]
    auto idx = attach_lora(**model, spec, a.max_lora_rank);
    if (!idx.ok()) return fail(idx.error().message);
    note("kairo serve: LoRA adapter %s = %s (scale %g), lora id %d\n", spec.name.c_str(), spec.path.c_str(),
         static_cast<double>(spec.scale), *idx - 1);
  }
  auto draft = load_draft_model(a.speculative, **model, a.device);
  if (!draft.ok()) return fail(draft.error().message);
  auto kv = plan_kv_pool((*model)->config(), (*model)->file(), (*model)->device(), a, draft->get(),
                         (*model)->file().file_size());
  if (!kv.ok()) return fail(kv.error().message);
  const plan::KvPoolRequest& kr = kv->request;
  const plan::AdapterMemory& lora = kv->adapters;
  const std::string lora_bytes =
      lora.total_bytes() == 0
          ? std::string()
          : strprintf(", LoRA adapters %s (%s)", human_bytes(lora.total_bytes()).c_str(), lora.describe().c_str());
  if (a.kv_cache_mib > 0) {
    note("kairo serve: KV cache budget %s (--kv-cache-memory); weights %s%s\n", human_bytes(kr.budget_bytes).c_str(),
         human_bytes((*model)->file().file_size()).c_str(), lora_bytes.c_str());
  } else {
    note("kairo serve: memory budget %s (%s): weights %s%s, activations %s, runtime overhead %s, the KV cache the "
         "rest, up to %d sequences of %d tokens\n",
         human_bytes(kr.budget_bytes).c_str(), kv->budget_source.c_str(), human_bytes(kr.weights_bytes).c_str(),
         lora_bytes.c_str(), human_bytes(kr.activation_bytes).c_str(), human_bytes(kr.overhead_bytes).c_str(),
         a.max_num_seqs, kr.max_model_len);
  }
  auto engine = make_engine(**model, tk, a, *kv, draft->get());
  if (!engine.ok()) return fail("cannot start the engine: " + engine.error().message);
  note("kairo serve: %s\n", engine->engine->memory_summary().c_str());
  if (a.speculative.method != "none" || *draft) {
    const engine::SpeculativeConfig& sc = a.speculative.config;
    const std::string how = *draft ? "draft model " + a.speculative.draft_model + " (greedy)"
                                   : strprintf("ngram (suffixes of %d-%d tokens)", sc.ngram.min_n, sc.ngram.max_n);
    note("kairo serve: speculative decoding: %s, up to %d proposed tokens per request and step, %s%s\n", how.c_str(),
         sc.num_tokens, sc.adaptive ? "in steps where the measured step times say it pays" : "in every step",
         sc.max_batch > 0 ? strprintf(", while fewer than %d requests run", sc.max_batch).c_str() : "");
  }

  srv.attach(*engine->engine, tk, std::move(chat_template->render), chat_template->traits);
  const bool drained = srv.run_until_signal([&] {
    note("kairo serve: ready: model \"%s\", context %d tokens\n", info.id.c_str(), engine->engine->context_length());
  });
  note("kairo serve: stopped (%s)\n",
       drained ? "all requests finished" : "requests still running at --shutdown-timeout were cancelled");
  return 0;
}

void setup_serve(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto& s = a->server;
  auto& lim = s.limits;
  auto& http = s.http;
  CLI::App* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  add_device_option(cmd, a->device);
  cmd->add_option("--model,-m", a->model_args,
                  "GGUF model file, or NAME=FILE to serve it as NAME; repeatable: several models, each loaded when "
                  "a request names it (default: " +
                      a->model + ")")
      ->allow_extra_args(false);
  cmd->add_option("--models-dir", a->models_dir,
                  "Serve every .gguf file in this directory by its file name without .gguf, each loaded when a "
                  "request names it")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--max-loaded-models", a->max_loaded_models,
                  "With several models: how many may be in memory at once (0 = as many as the memory budget holds); "
                  "loading another unloads the least recently used idle one")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--model-switch-wait", a->model_switch_wait_s,
                  "With several models: seconds a request for an unloaded model waits for a busy one to become idle "
                  "when the limits leave no room (503 after)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--host", s.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", s.port, "Port to listen on (0 = any free port)")->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--served-model-name", a->served_names,
                  "Name(s) clients use as `model`; the first is listed by /v1/models (default: the file's stem)");
  cmd->add_option("--lora", a->loras,
                  "LoRA adapter NAME=PATH[:SCALE] (llama.cpp GGUF; repeatable): requests with \"model\": NAME, or "
                  "llama-server's \"lora\": [{\"id\": I, \"scale\": S}] (I: its place from 0), run with it, mixed in "
                  "the same batches as the base");
  cmd->add_option("--max-lora-rank", a->max_lora_rank,
                  "Largest adapter rank accepted; with --allow-runtime-lora, the rank of the F16 slots reserved for "
                  "runtime loads (docs/lora.md)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--max-loras", a->max_loras,
                  "LoRA adapters resident at once: the --lora ones and those loaded while serving")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_flag("--allow-runtime-lora", s.allow_runtime_lora,
                "Serve POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's): load and unload LoRA adapters "
                "while serving (any key without a \"models\" list may)");
  cmd->add_option("--api-key", s.api_keys, "Require `Authorization: Bearer <key>` (repeatable)");
  cmd->add_option("--api-key-file", a->api_key_file, "File with one API key per line ('#' comments)");
  cmd->add_option("--api-keys-file", s.api_keys_file,
                  "JSON file of named API keys with limits (max_concurrent_requests, tokens_per_minute, priority, "
                  "weight, models; docs/limits.md); reloaded on SIGHUP")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cors-origin", s.cors_origin, "Allow browser requests from this origin ('*' for any); off by default");
  cmd->add_option("--ssl-certfile", s.ssl_certfile, "Serve HTTPS (TLS 1.2 or newer) with this PEM certificate chain")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ssl-keyfile", s.ssl_keyfile, "The certificate's PEM private key (with --ssl-certfile)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--metrics-prefix", s.metrics_prefix, "Prefix of the /metrics names ('vllm:' for vLLM dashboards)")
      ->capture_default_str();
  cmd->add_option("--shutdown-timeout", s.shutdown_timeout_s,
                  "Seconds in-flight requests may finish after SIGTERM/SIGINT before they are cancelled")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--http-threads", s.n_http_threads, "HTTP threads (0 = min(4, cores))")->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--retry-after", s.retry_after_s, "Retry-After seconds sent with 429 when the queue is full")
      ->capture_default_str()->check(CLI::Range(0, 3600));
  cmd->add_flag("--no-access-log", [a](int64_t) { a->server.access_log = false; }, "Do not log requests to stderr");
  cmd->add_flag("--no-webui", [a](int64_t) { a->server.webui = false; },
                "Do not serve the browser chat UI at / (the API is unchanged)");
  cmd->add_option("--chat-template-file", a->chat_template_file,
                  "Jinja chat template to use instead of the model's (tool-call and reasoning formats follow it)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--reasoning-format", a->reasoning_format,
                  "Chat replies of thinking models: deepseek puts <think>...</think> in reasoning_content, none leaves "
                  "it in content, auto is deepseek when the chat template has a </think>")
      ->check(CLI::IsMember({"auto", "deepseek", "none"}))
      ->capture_default_str();
  // Request limits.
  cmd->add_option("--max-body-bytes", lim.max_body_bytes, "Largest request body (413 beyond)")->capture_default_str();
  cmd->add_option("--max-header-bytes", lim.max_header_bytes, "Largest request head (431 beyond)")
      ->capture_default_str();
  cmd->add_option("--max-json-depth", lim.max_json_depth, "Deepest JSON nesting in a body")->capture_default_str()
      ->check(CLI::Range(2, 10000));
  cmd->add_option("--max-messages", lim.max_messages, "Chat messages per request")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-tools", lim.max_tools, "Tools per request")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-stop", lim.max_stop, "Stop strings per request")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-stop-bytes", lim.max_stop_bytes, "Bytes per stop string")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-n", lim.max_n, "Choices per request (n x prompts)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-prompts", lim.max_prompts, "Prompts in one /v1/completions batch")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-logprobs", lim.max_logprobs, "Largest logprobs / top_logprobs")->capture_default_str()
      ->check(CLI::Range(0, 20));
  cmd->add_option("--max-logit-bias", lim.max_logit_bias, "Entries of logit_bias")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-tokens-limit", lim.max_tokens, "Cap on max_tokens (0 = the context length)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-connections", http.max_connections,
                  "Open connections (when full, the longest-waiting unfinished request head gets 408; else 503)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections-per-client", http.max_connections_per_client,
                  "Open connections from one address (429 beyond; 0 = no cap, the default)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--header-timeout", http.header_timeout_s, "Seconds to wait for a request head (and keep-alive idle)")
      ->capture_default_str()->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--body-timeout", http.body_timeout_s, "Seconds to receive a request body")->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--write-timeout", http.write_timeout_s, "Seconds one write to a client may take")
      ->capture_default_str()->check(CLI::Range(0.01, 3600.0));
  // Engine.
  cmd->add_option("--threads", a->threads, "Compute threads (0 = all available cores)")->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--max-num-seqs", a->max_num_seqs, "Sequences batched in one engine step")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-num-batched-tokens", a->max_num_batched_tokens, "Token budget of one engine step")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--fair-min-chunk", a->fair_min_chunk,
                  "With several API-key tenants at work: the fewest tokens a tenant's share of a step is cut to "
                  "while another tenant's share is smaller (docs/limits.md)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option(
         "--fair-solo-tokens", a->fair_solo_tokens,
         "With --api-keys-file: the token budget of a step while only one key has work, so another key's "
         "request waits for a short step (default: a quarter of --max-num-batched-tokens; 0: the whole budget)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--block-size", a->block_size, "KV-cache block size in tokens")->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--max-model-len", a->max_model_len,
                  "Longest prompt + output served, in tokens (0 = the model's context length)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-dtype", a->kv_dtype, "KV-cache type: f16, bf16 or q8_0")->capture_default_str();
  cmd->add_option("--mem-budget-gb", a->mem_budget_gb,
                  "Memory for weights + KV cache + activations + overhead, in GiB; the KV cache gets the rest, up to "
                  "--max-num-seqs sequences of --max-model-len (0 = 90 % of the available memory, as `kairo plan "
                  "--device cpu` assumes)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-cache-memory", a->kv_cache_mib,
                  "KV-cache size in MiB, instead of sizing it from the memory budget (0 = from the budget)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-waiting", a->max_waiting, "Queued requests beyond this get 429")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-prefix-caching", a->no_prefix_caching, "Disable prefix caching");
  cmd->add_flag("--exact-numerics", a->exact_numerics,
                "Batch-invariant matmuls for every request (default: only for temperature 0; steps of sampled "
                "requests alone may use faster relaxed kernels for long prompts)");
  add_speculative_options(cmd, a->speculative);
  cmd->callback([a] { set_exit_code(run_serve(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(serve, setup_serve);

}  // namespace kairo::tools
