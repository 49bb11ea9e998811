#pragma once
// Everything `kairo serve` can be told, with the defaults it documents. Plain data: the serve command fills it from
// flags; tests fill it directly (port 0 = an ephemeral port).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace kairo::server {

// Bounds on what one request may ask for. Each is checked before anything reaches the engine, and each has a flag
// (the name in the comment) so an operator can widen it.
struct RequestLimits {
  uint64_t max_body_bytes = 8u << 20;   // --max-body-bytes: larger bodies get 413
  uint32_t max_header_bytes = 16u << 10;  // --max-header-bytes: larger request heads get 431
  int max_json_depth = 64;              // --max-json-depth: deeper nesting gets 400 (no recursive blow-up)
  int max_messages = 2048;              // --max-messages: chat messages per request
  int max_tools = 128;                  // --max-tools: entries of `tools`
  int max_stop = 16;                    // --max-stop: stop strings per request
  int max_stop_bytes = 256;             // --max-stop-bytes: bytes per stop string
  int max_n = 16;                       // --max-n: choices per request (n, times the prompts of a batch)
  int max_prompts = 64;                 // --max-prompts: prompts in one /v1/completions batch
  int max_logprobs = 20;                // --max-logprobs: logprobs / top_logprobs
  int max_logit_bias = 1024;            // --max-logit-bias: entries of logit_bias
  int max_tokens = 0;                   // --max-tokens-limit: cap on max_tokens; 0 = the context length
};

// How the HTTP layer treats connections.
struct HttpLimits {
  int max_connections = 1024;     // --max-connections: when full, the connection that has waited longest for a
                                  // complete request head gets 408 to make room; with none waiting, 503
  // --max-connections-per-client: one address's open connections (429 beyond); 0 = no cap. Off by default: a load
  // generator or a reverse proxy is one address with many connections, and shedding (above) already keeps a full
  // table serving clients that complete their requests; set it where clients reach the server directly.
  int max_connections_per_client = 0;
  double header_timeout_s = 30;   // --header-timeout: idle keep-alive wait + reading a request head (slowloris)
  double body_timeout_s = 60;     // --body-timeout: reading a request body
  double write_timeout_s = 60;    // --write-timeout: one write to a client that stopped reading
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0 = any free port (tests); Server::port() tells which
  int n_http_threads = 0;              // 0 = min(4, hardware threads)
  std::vector<std::string> api_keys;   // --api-key / --api-key-file: keys of the anonymous tenant (no limits)
  // --api-keys-file: named keys with limits (tenants.h), read by Server::start and again on SIGHUP. With neither
  // this nor api_keys, no authentication.
  std::string api_keys_file;
  std::string cors_origin;             // empty = no CORS headers; "*" or an origin
  std::string ssl_certfile;            // --ssl-certfile / --ssl-keyfile: PEM files; both set = HTTPS only (TLS >= 1.2)
  std::string ssl_keyfile;
  std::string metrics_prefix = "kairo:";
  double shutdown_timeout_s = 30;      // in-flight requests after stop(): finish within this, then get aborted
  int retry_after_s = 1;               // Retry-After on 429 (engine queue full)
  bool access_log = true;              // one JSON line per request on stderr
  // Chat replies of a thinking model: with Deepseek, `<think>…</think>` goes to message.reasoning_content (and
  // .reasoning) and the rest to content (llama.cpp's --reasoning-format deepseek); Auto does so when the model's
  // chat template has a `</think>` (Backend::template_thinks); None leaves the reply as it is.
  enum class ReasoningFormat { Auto, Deepseek, None };
  ReasoningFormat reasoning_format = ReasoningFormat::Auto;
  // --allow-runtime-lora: POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's) load and unload adapters
  // while serving; without it they answer 404 naming the flag.
  bool allow_runtime_lora = false;
  bool webui = true;                   // the browser chat UI at / (web_ui.h); --no-webui: off (404)
  RequestLimits limits;
  HttpLimits http;
};

// What /v1/models reports and the engine's device ceiling for the bandwidth gauge.
struct ModelInfo {
  std::string id = "kairo";            // the name clients send as `model`
  std::vector<std::string> aliases;    // other names accepted as `model`
  // LoRA adapters of --lora NAME=... (more may be loaded while serving: ServerContext::loras): a request whose `model`
  // is adapters[i] runs with the engine's adapter i + 1.
  std::vector<std::string> adapters;
  int64_t created = 0;                 // unix seconds
  std::string owned_by = "kairo";
  double device_bandwidth_gbps = 0;    // memory bandwidth ceiling; 0 = unknown (no utilisation gauge)
  // An embedding model's pooling (<arch>.pooling_type): POST /v1/embeddings serves it; None refuses embeddings.
  engine::EmbeddingPooling pooling = engine::EmbeddingPooling::None;
  std::string pooling_key;             // the metadata key that would declare it, for the refusal's message
  int embedding_dim = 0;               // the vectors' length (the model's width)
  // What /v1/models reports while the model is not loaded (a loaded one reports its engine's).
  int context_length = 0;
};

}  // namespace kairo::server
