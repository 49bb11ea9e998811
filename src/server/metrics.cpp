#include "server/metrics.h"

#include <algorithm>

#include "core/format.h"

namespace kairo::server {

namespace {

// vLLM's buckets, extended below 10 ms for inter-token latency because a small model on a CPU emits faster.
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,    0.75,
                                          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160., 640.0, 2560.0};
const std::vector<double> kItlBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2, 0.3,
                                         0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
const std::vector<double> kLatencyBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,   2.5,   5.0,   10.0,  15.0,  20.0,
                                             30.0, 40.0, 50.0, 60.0, 120., 240.0, 480.0, 960.0, 1920., 7680.0};

std::string escape_label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string num(double v) { return strprintf("%.17g", v); }

}  // namespace

std::string escape_metric_label(const std::string& value) { return escape_label(value); }
std::string metric_number(double value) { return num(value); }

std::string render_histogram_samples(const std::string& name, const std::string& labels, const Histogram& h) {
  std::string out;
  const std::string sep = labels.empty() ? "" : ",";
  const auto cum = h.cumulative();
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    out += name + "_bucket{" + labels + sep + "le=\"" + num(h.bounds()[i]) + "\"} " + num(double(cum[i])) + "\n";
  }
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + num(double(cum.back())) + "\n";
  out += name + "_sum{" + labels + "} " + num(h.sum()) + "\n";
  out += name + "_count{" + labels + "} " + num(double(h.count())) + "\n";
  return out;
}

std::string merge_metric_families(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  struct Family {
    std::string head;  // its HELP and TYPE lines
    std::string samples;
  };
  std::vector<std::string> order;
  std::map<std::string, Family> families;
  for (const std::string& part : parts) {
    Family* current = nullptr;
    size_t pos = 0;
    while (pos < part.size()) {
      size_t end = part.find('\n', pos);
      if (end == std::string::npos) end = part.size();
      const std::string line = part.substr(pos, end - pos);
      pos = end + 1;
      if (line.rfind("# HELP ", 0) == 0) {
        const std::string name = line.substr(7, line.find(' ', 7) - 7);
        auto [it, added] = families.try_emplace(name);
        if (added) order.push_back(name);
        current = &it->second;
        if (added) current->head = line + "\n";
      } else if (line.rfind("# TYPE ", 0) == 0) {
        if (current && current->head.find("# TYPE ") == std::string::npos) current->head += line + "\n";
      } else if (!line.empty() && current) {
        current->samples += line + "\n";
      }
    }
  }
  std::string out;
  for (const std::string& name : order) out += families[name].head + families[name].samples;
  return out;
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t idx = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  std::lock_guard lock(mutex_);
  ++counts_[idx];
  sum_ += value;
  ++count_;
}

std::vector<uint64_t> Histogram::cumulative() const {
  std::lock_guard lock(mutex_);
  std::vector<uint64_t> out(counts_.size());
  uint64_t running = 0;
  for (size_t i = 0; i < counts_.size(); ++i) out[i] = running += counts_[i];
  return out;
}

double Histogram::sum() const {
  std::lock_guard lock(mutex_);
  return sum_;
}

uint64_t Histogram::count() const {
  std::lock_guard lock(mutex_);
  return count_;
}

ServerMetrics::ServerMetrics(std::string prefix, std::string model_name)
    : time_to_first_token(kTtftBuckets),
      inter_token_latency(kItlBuckets),
      e2e_request_latency(kLatencyBuckets),
      request_queue_time(kLatencyBuckets),
      request_prefill_time(kLatencyBuckets),
      request_decode_time(kLatencyBuckets),
      prefix_(std::move(prefix)),
      labels_("model_name=\"" + escape_label(model_name) + "\"") {}

void ServerMetrics::count_finished(engine::FinishReason reason, int n_prompt_tokens, int n_generation_tokens) {
  finished_[static_cast<size_t>(reason)].fetch_add(1);
  prompt_tokens_.fetch_add(n_prompt_tokens);
  generation_tokens_.fetch_add(n_generation_tokens);
}

int64_t ServerMetrics::finished_total(engine::FinishReason reason) const {
  return finished_[static_cast<size_t>(reason)].load();
}

void ServerMetrics::count_http_status(int status) {
  std::lock_guard lock(http_mutex_);
  ++http_status_[status];
}

std::string ServerMetrics::render(const engine::EngineStats& stats, double device_bandwidth_gbps) const {
  std::string out;
  auto head = [&](const std::string& name, const char* type, const char* help) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto sample = [&](const std::string& name, double value, const std::string& extra_labels = "") {
    out += name + "{" + labels_ + extra_labels + "} " + num(value) + "\n";
  };
  auto gauge = [&](const char* name, double value, const char* help) {
    const std::string full = prefix_ + name;
    head(full, "gauge", help);
    sample(full, value);
  };
  auto counter = [&](const char* name, double value, const char* help) {
    const std::string full = prefix_ + name;
    head(full, "counter", help);
    sample(full, value);
  };
  auto histogram = [&](const char* name, const Histogram& h, const char* help) {
    const std::string full = prefix_ + name;
    head(full, "histogram", help);
    const auto cum = h.cumulative();
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      sample(full + "_bucket", static_cast<double>(cum[i]), ",le=\"" + num(h.bounds()[i]) + "\"");
    }
    sample(full + "_bucket", static_cast<double>(cum.back()), ",le=\"+Inf\"");
    sample(full + "_sum", h.sum());
    sample(full + "_count", static_cast<double>(h.count()));
  };

  gauge("num_requests_running", stats.n_running, "Number of requests in model execution batches.");
  gauge("num_requests_waiting", stats.n_waiting, "Number of requests waiting to be processed.");
  gauge("kv_cache_usage_perc", stats.kv_usage, "KV-cache usage. 1 means 100 percent usage.");
  counter("num_preemptions_total", static_cast<double>(stats.n_preemptions), "Cumulative number of preemptions.");
  counter("prefix_cache_queries_total", static_cast<double>(stats.prefix_cache_queries),
          "Prefix cache queries, in terms of number of queried tokens.");
  counter("prefix_cache_hits_total", static_cast<double>(stats.prefix_cache_hits),
          "Prefix cache hits, in terms of number of cached tokens.");
  counter("prompt_tokens_total", static_cast<double>(prompt_tokens_.load()), "Number of prefill tokens processed.");
  counter("generation_tokens_total", static_cast<double>(generation_tokens_.load()),
          "Number of generation tokens processed.");
  counter("spec_decode_num_drafts_total", static_cast<double>(stats.spec_num_drafts),
          "Number of spec decoding drafts.");
  counter("spec_decode_num_draft_tokens_total", static_cast<double>(stats.spec_num_draft_tokens),
          "Number of draft tokens.");
  counter("spec_decode_num_accepted_tokens_total", static_cast<double>(stats.spec_num_accepted_tokens),
          "Number of accepted tokens.");
  {
    const std::string full = prefix_ + "spec_decode_num_accepted_tokens_per_pos_total";
    head(full, "counter", "Accepted tokens per draft position.");
    for (size_t i = 0; i < stats.spec_num_accepted_tokens_per_pos.size(); ++i) {
      sample(full, static_cast<double>(stats.spec_num_accepted_tokens_per_pos[i]),
             ",position=\"" + std::to_string(i) + "\"");
    }
  }
  {
    const std::string full = prefix_ + "request_success_total";
    head(full, "counter", "Count of successfully processed requests.");
    const std::pair<engine::FinishReason, const char*> reasons[] = {
        {engine::FinishReason::Stop, "stop"}, {engine::FinishReason::Length, "length"},
        {engine::FinishReason::Abort, "abort"}};
    for (const auto& [reason, label] : reasons) {
      sample(full, static_cast<double>(finished_total(reason)), std::string(",finished_reason=\"") + label + "\"");
    }
  }
  histogram("time_to_first_token_seconds", time_to_first_token, "Histogram of time to first token in seconds.");
  histogram("inter_token_latency_seconds", inter_token_latency, "Histogram of inter-token latency in seconds.");
  histogram("e2e_request_latency_seconds", e2e_request_latency,
            "Histogram of end to end request latency in seconds.");
  histogram("request_queue_time_seconds", request_queue_time,
            "Histogram of time spent in WAITING phase for request.");
  histogram("request_prefill_time_seconds", request_prefill_time,
            "Histogram of time spent in PREFILL phase for request.");
  histogram("request_decode_time_seconds", request_decode_time,
            "Histogram of time spent in DECODE phase for request.");

  // kairo's own: the number that says how close decoding runs to the memory-bandwidth roofline.
  head("kairo:weight_read_bandwidth_gbps", "gauge", "Achieved weight-read bandwidth over the last engine steps, GB/s.");
  sample("kairo:weight_read_bandwidth_gbps", stats.weight_read_gbps);
  if (device_bandwidth_gbps > 0) {
    head("kairo:weight_read_bandwidth_perc", "gauge", "Achieved weight-read bandwidth as a fraction of the device's.");
    sample("kairo:weight_read_bandwidth_perc", stats.weight_read_gbps / device_bandwidth_gbps);
  }
  if (stats.n_window_kv_blocks_total > 0) {  // the sliding-window layers' own pool, bounded by the window
    head("kairo:window_kv_cache_usage_perc", "gauge",
         "KV-cache usage of the sliding-window layers' own block pool. 1 means 100 percent usage.");
    sample("kairo:window_kv_cache_usage_perc",
           static_cast<double>(stats.n_window_kv_blocks_used) / static_cast<double>(stats.n_window_kv_blocks_total));
  }
  {
    std::lock_guard lock(http_mutex_);
    head("kairo:http_responses_total", "counter", "HTTP responses by status code.");
    for (const auto& [status, n] : http_status_) {
      sample("kairo:http_responses_total", static_cast<double>(n), ",code=\"" + std::to_string(status) + "\"");
    }
  }
  return out;
}

std::string ServerMetrics::render_tenants(const std::vector<TenantCounters>& tenants) const {
  if (tenants.empty()) return "";
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help, auto value_of) {
    out += strprintf("# HELP kairo:%s %s\n# TYPE kairo:%s %s\n", name, help, name, type);
    for (const auto& t : tenants) {
      out += strprintf("kairo:%s{%s,tenant=\"%s\"} %s\n", name, labels_.c_str(), escape_label(t.name).c_str(),
                       num(static_cast<double>(value_of(t))).c_str());
    }
  };
  family("tenant_requests_total", "counter", "Generation requests admitted, by API key name.",
         [](const TenantCounters& t) { return t.n_requests; });
  {
    const char* name = "kairo:tenant_requests_rejected_total";
    out += strprintf("# HELP %s Requests refused by a key's limit (429 or 403), by API key name and limit.\n"
                     "# TYPE %s counter\n",
                     name, name);
    for (const auto& t : tenants) {
      for (size_t i = 0; i < kNumTenantLimits; ++i) {
        out += strprintf("%s{%s,tenant=\"%s\",limit=\"%s\"} %s\n", name, labels_.c_str(),
                         escape_label(t.name).c_str(), tenant_limit_label(static_cast<TenantLimit>(i)),
                         num(static_cast<double>(t.n_rejected[i])).c_str());
      }
    }
  }
  family("tenant_prompt_tokens_total", "counter", "Prompt tokens of admitted requests, by API key name.",
         [](const TenantCounters& t) { return t.n_prompt_tokens; });
  family("tenant_generation_tokens_total", "counter", "Generated tokens, by API key name.",
         [](const TenantCounters& t) { return t.n_generation_tokens; });
  family("tenant_requests_in_flight", "gauge", "Generation requests in flight, by API key name.",
         [](const TenantCounters& t) { return t.n_in_flight; });
  return out;
}

}  // namespace kairo::server
