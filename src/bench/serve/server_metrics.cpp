#include "bench/serve/server_metrics.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace kairo::bench::serve {
namespace {

bool has_name(std::string_view metric, std::string_view name) {
  if (metric == name) return true;
  return metric.size() > name.size() && metric.substr(metric.size() - name.size()) == name &&
         metric[metric.size() - name.size() - 1] == ':';
}

}  // namespace

ServerCounters parse_server_metrics(const std::string& text) {
  ServerCounters c;
  bool ttft = false, e2e = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos) continue;
    const std::string_view name(line.data(), name_end);
    const size_t value_at = line.find_last_of(' ');
    if (value_at == std::string::npos || value_at + 1 >= line.size()) continue;
    char* end = nullptr;
    const double value = std::strtod(line.c_str() + value_at + 1, &end);
    if (end == line.c_str() + value_at + 1) continue;
    if (has_name(name, "time_to_first_token_seconds_sum")) { c.ttft_sum += value; ttft = true; }
    else if (has_name(name, "time_to_first_token_seconds_count")) c.ttft_count += value;
    else if (has_name(name, "inter_token_latency_seconds_sum")) c.itl_sum += value;
    else if (has_name(name, "inter_token_latency_seconds_count")) c.itl_count += value;
    else if (has_name(name, "e2e_request_latency_seconds_sum")) { c.e2e_sum += value; e2e = true; }
    else if (has_name(name, "e2e_request_latency_seconds_count")) c.e2e_count += value;
    else if (has_name(name, "generation_tokens_total")) c.generation_tokens += value;
    else if (has_name(name, "spec_decode_num_drafts_total")) c.spec_drafts += value;
    else if (has_name(name, "spec_decode_num_draft_tokens_total")) c.spec_draft_tokens += value;
    else if (has_name(name, "spec_decode_num_accepted_tokens_total")) c.spec_accepted_tokens += value;
  }
  c.available = ttft && e2e;
  return c;
}

ServerCounters scrape_server_metrics(const Url& url, const std::string& api_key, double timeout_s) {
  namespace net = boost::asio;
  net::io_context ioc(1);
  HttpExchange ex;
  ex.method = "GET";
  ex.target = "/metrics";
  if (!api_key.empty()) ex.headers.push_back({"Authorization", "Bearer " + api_key});
  ex.timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string body;
  HttpOutcome out;
  net::co_spawn(ioc, http_stream(url, ex, [&](std::string_view p) { body.append(p); }, out), net::detached);
  ioc.run();
  if (!out.error.empty() || out.status != 200) return {};
  return parse_server_metrics(body);
}

ServerView server_view(const ServerCounters& before, const ServerCounters& after) {
  ServerView v;
  v.n_requests = after.e2e_count - before.e2e_count;
  if (!before.available || !after.available || v.n_requests <= 0) return v;
  v.available = true;
  const double n_ttft = after.ttft_count - before.ttft_count;
  const double n_itl = after.itl_count - before.itl_count;
  if (n_ttft > 0) v.mean_ttft_ms = 1000 * (after.ttft_sum - before.ttft_sum) / n_ttft;
  if (n_itl > 0) v.mean_itl_ms = 1000 * (after.itl_sum - before.itl_sum) / n_itl;
  v.mean_e2e_ms = 1000 * (after.e2e_sum - before.e2e_sum) / v.n_requests;
  v.generation_tokens = after.generation_tokens - before.generation_tokens;
  const double drafts = after.spec_drafts - before.spec_drafts;
  const double proposed = after.spec_draft_tokens - before.spec_draft_tokens;
  const double accepted = after.spec_accepted_tokens - before.spec_accepted_tokens;
  if (proposed > 0) v.spec_acceptance_rate = accepted / proposed;
  if (drafts > 0) v.spec_mean_accepted_length = 1 + accepted / drafts;
  return v;
}

}  // namespace kairo::bench::serve
