#include "bench/serve/sweep.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cmath>

#include "core/format.h"

namespace kairo::bench::serve {
namespace {

namespace net = boost::asio;

}  // namespace

// One request, alone, with a short output: is the server there and does it stream?
Status check_server(const SweepOptions& o) {
  WorkloadOptions w = o.workload;
  w.seed ^= 0x5eed;
  w.output_tokens = std::min(w.output_tokens, 4);
  w.long_fraction = 0;
  std::vector<Session> sessions = make_sessions(w, 1);
  const LevelRun run = run_level(o.client, sessions, LoadLevel{false, 1}, 0, nullptr);
  if (!run.error.empty()) return Error{run.error};
  const RequestRecord& r = run.records.at(0);
  if (r.ok) return {};
  return Error{strprintf("the check request to http://%s:%s failed: %s%s", o.client.url.host.c_str(),
                         o.client.url.port.c_str(), r.error.c_str(),
                         r.error.rfind("connect", 0) == 0 ? "; is the server running at --url?" : "")};
}

int requests_for_level(const SweepOptions& o, const LoadLevel& level) {
  if (o.n_requests > 0) return o.n_requests;
  const int scaled = static_cast<int>(std::ceil(level.value * (level.open_loop ? 8 : 4)));
  return std::max(16, scaled);
}

Result<SweepResult> run_sweep(const SweepOptions& o) {
  if (o.levels.empty()) return Error{"no load levels: give --concurrency and/or --request-rate"};
  KAIRO_TRY_STATUS(check_server(o));
  SweepResult result;
  for (size_t i = 0; i < o.levels.size(); ++i) {
    const LoadLevel& level = o.levels[i];
    WorkloadOptions w = o.workload;
    w.seed = o.workload.seed + 1000003 * (i + 1);  // fresh prompts per level: no prefix-cache hits across levels
    const std::vector<Session> sessions = make_sessions(w, requests_for_level(o, level));
    const std::string label = level.label();
    ProgressFn progress;
    if (o.progress) progress = [&](int d, int t, int64_t tok, double el) { o.progress(label, d, t, tok, el); };
    const ServerCounters before = scrape_server_metrics(o.client.url, o.client.api_key, 10);
    LevelRun run = run_level(o.client, sessions, level, o.workload.seed + i, progress);
    if (!run.error.empty()) return Error{level.label() + ": " + run.error};
    const ServerCounters after = scrape_server_metrics(o.client.url, o.client.api_key, 10);
    result.levels.push_back(compute_metrics(run, o.slo));
    result.levels.back().server = server_view(before, after);
    result.runs.push_back(std::move(run));
  }
  return result;
}

Result<std::string> discover_model(const Url& url, const std::string& api_key, double timeout_s) {
  net::io_context ioc(1);
  HttpExchange ex;
  ex.method = "GET";
  ex.target = endpoint_path(url, "models");
  if (!api_key.empty()) ex.headers.push_back({"Authorization", "Bearer " + api_key});
  ex.timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string body;
  HttpOutcome out;
  net::co_spawn(ioc, http_stream(url, ex, [&](std::string_view p) { body.append(p); }, out), net::detached);
  ioc.run();
  if (!out.error.empty()) return Error{out.error};
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (out.status != 200 || j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_array() ||
      j["data"].empty() || !j["data"][0].is_object() || !j["data"][0].contains("id") || !j["data"][0]["id"].is_string()) {
    return Error{strprintf("GET %s gave HTTP %d without a model id", ex.target.c_str(), out.status)};
  }
  return j["data"][0]["id"].get<std::string>();
}

}  // namespace kairo::bench::serve
