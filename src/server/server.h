#pragma once
// `kairo serve` as a library: an OpenAI-compatible HTTP server over an EngineClient.
//
//   Server server(config, model_info);
//   KAIRO_TRY_STATUS(server.start());          // listening; /health answers 503 "loading"
//   ... load the model, build the engine ...
//   server.attach(engine, tokenizer, chat_template);   // /health turns 200; requests are served
//   server.run_until_signal();                 // SIGINT/SIGTERM: graceful stop, then returns; SIGHUP: reload the
//                                              // keys file (config.api_keys_file)
//
// Tests use port 0 and port() to learn the ephemeral port, and stop() instead of a signal.
#include <functional>
#include <memory>

#include "core/result.h"
#include "engine/engine_client.h"
#include "server/chat_template.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/server_config.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server {

class Server {
 public:
  Server(ServerConfig config, ModelInfo model);
  // Several models by name (the first is the primary: requests without `model` run on it), each loaded by its loader
  // on demand, within `limits` (model_registry.h). load() some before run_until_signal, then mark_ready().
  Server(ServerConfig config, std::vector<ModelEntry> models, ModelLimits limits);
  ~Server();  // stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Reads config.api_keys_file (when set), binds the address and starts the HTTP threads. Errors say which file or
  // address and why.
  Status start();
  // Reads config.api_keys_file again and swaps in its keys at once; returns their number. On an error the keys in
  // use stay. Requests in flight keep the tenant they were admitted with; usage (in flight, token buckets, counters)
  // is kept by name, so a reload cannot reset a limit. SIGHUP calls this during run_until_signal().
  Result<size_t> reload_api_keys();
  // Makes the server ready. The engine and tokenizer must outlive the server. chat_template empty: ChatML.
  void attach(engine::EngineClient& engine, const tokenizer::Tokenizer& tokenizer, ChatTemplate chat_template = {},
              ChatTemplateTraits traits = {});
  int port() const;
  // Loads the model with this id now, on this thread (startup preloads; the limits apply as for a request).
  Status load(const std::string& id);
  // /health turns 200 and requests are served (attach() does this itself).
  void mark_ready();
  // The model's unloads so far (tests); -1 for an id that is not served.
  int64_t n_unloads(const std::string& id) const;

  // Blocks until SIGINT or SIGTERM (or stop() from another thread), then stops gracefully. Returns stop()'s value.
  // on_ready runs once SIGINT/SIGTERM are handled (announce readiness there: a signal sent after it always drains).
  // With config.api_keys_file, SIGHUP reloads it meanwhile (reload_api_keys), logging the outcome on stderr.
  bool run_until_signal(const std::function<void()>& on_ready = {});
  // Graceful stop: no new connections or generations; in-flight requests may finish within
  // config.shutdown_timeout_s, then are cancelled (their clients get 503 / an error event). True when everything
  // finished without cancelling. Idempotent.
  bool stop();

  const ServerMetrics& metrics() const;
  size_t n_inflight() const;
  int n_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kairo::server
