#pragma once
// The server's own view of a load level: its Prometheus /metrics (vLLM's metric names under any prefix, e.g.
// "vllm:" or "kairo:") read before and after the level, so the report can put the server's mean TTFT, inter-token
// latency and end-to-end latency next to what the client measured. Servers without /metrics (or with other
// names) simply have no server view.
#include <cstdint>
#include <string>

#include "bench/serve/http_client.h"

namespace kairo::bench::serve {

// Cumulative counters (summed over label sets) from one scrape.
struct ServerCounters {
  bool available = false;  // the histograms were found
  double ttft_sum = 0, ttft_count = 0;
  double itl_sum = 0, itl_count = 0;
  double e2e_sum = 0, e2e_count = 0;
  double generation_tokens = 0;
  // Speculative decoding (vLLM's spec_decode_* counters; 0 when the server does not speculate).
  double spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
};

// Parses Prometheus text exposition: `name{labels} value` lines, '#' comments skipped. A metric counts when its
// name is the vLLM name or ends in ":" + it.
ServerCounters parse_server_metrics(const std::string& text);

// GET /metrics; available = false when the server has none (any error, non-200, or no matching histograms).
ServerCounters scrape_server_metrics(const Url& url, const std::string& api_key, double timeout_s);

// Means over the requests that finished between two scrapes.
struct ServerView {
  bool available = false;
  double n_requests = 0;
  double mean_ttft_ms = 0, mean_itl_ms = 0, mean_e2e_ms = 0;
  double generation_tokens = 0;
  // Over the level: accepted / proposed tokens, and tokens per verifying step (1 + accepted / proposals); 0 when
  // nothing was proposed.
  double spec_acceptance_rate = 0, spec_mean_accepted_length = 0;
};
ServerView server_view(const ServerCounters& before, const ServerCounters& after);

}  // namespace kairo::bench::serve
