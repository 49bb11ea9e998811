#pragma once
// Prometheus metrics under vLLM's names (so existing Grafana dashboards and autoscalers work), with a configurable
// prefix ("kairo:" by default, "vllm:" for drop-in use). Request timings and token counts are observed here by the
// server as outputs arrive; queue and engine gauges come from EngineStats at scrape time. Thread-safe.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "engine/request.h"
#include "server/tenant_usage.h"

namespace kairo::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Cumulative counts per bound (Prometheus `le` semantics), the +Inf count last.
  std::vector<uint64_t> cumulative() const;
  double sum() const;
  uint64_t count() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; +Inf last
  double sum_ = 0;
  uint64_t count_ = 0;
};

// A Prometheus label value escaped (backslash, quote, newline) and a sample value as the exposition text writes it.
std::string escape_metric_label(const std::string& value);
std::string metric_number(double value);
// The _bucket, _sum and _count samples of `h` under `name`, with `labels` (`key="value",...`, no braces) on each.
std::string render_histogram_samples(const std::string& name, const std::string& labels, const Histogram& h);
// Several expositions as one: the samples of a family that appears in more than one part (one part per served
// model) go together under one HELP and TYPE, as the format requires, in the order the families first appear.
std::string merge_metric_families(const std::vector<std::string>& parts);

class ServerMetrics {
 public:
  ServerMetrics(std::string prefix, std::string model_name);

  Histogram time_to_first_token;
  Histogram inter_token_latency;
  Histogram e2e_request_latency;
  Histogram request_queue_time;
  Histogram request_prefill_time;
  Histogram request_decode_time;

  // One finished engine request (one choice).
  void count_finished(engine::FinishReason reason, int n_prompt_tokens, int n_generation_tokens);
  void count_http_status(int status);

  // The exposition text (format 0.0.4). device_bandwidth_gbps > 0 adds the utilisation gauge.
  std::string render(const engine::EngineStats& stats, double device_bandwidth_gbps) const;
  // The per-tenant series (kairo's own, so always under "kairo:"), labelled tenant="<the key's name>", never the
  // key: requests admitted, refusals by limit, prompt and generation tokens, requests in flight. "" for none.
  std::string render_tenants(const std::vector<TenantCounters>& tenants) const;

  int64_t prompt_tokens_total() const { return prompt_tokens_.load(); }
  int64_t generation_tokens_total() const { return generation_tokens_.load(); }
  int64_t finished_total(engine::FinishReason reason) const;

 private:
  std::string prefix_;
  std::string labels_;  // model_name="..."
  std::atomic<int64_t> prompt_tokens_{0};
  std::atomic<int64_t> generation_tokens_{0};
  std::array<std::atomic<int64_t>, 4> finished_{};  // by FinishReason
  mutable std::mutex http_mutex_;
  std::map<int, int64_t> http_status_;
};

}  // namespace kairo::server
