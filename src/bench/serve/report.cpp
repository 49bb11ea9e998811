#include "bench/serve/report.h"

#include "core/format.h"

namespace kairo::bench::serve {
namespace {

nlohmann::json dist_json(const Distribution& d) {
  return {{"n", d.n}, {"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

std::string ms(double v) { return v >= 100 ? strprintf("%.0f", v) : strprintf("%.1f", v); }

}  // namespace

std::string markdown_report(const std::vector<LevelMetrics>& levels, const Slo& slo) {
  std::string out;
  out += "| load | requests ok/failed | duration s | req/s | output tok/s | total tok/s | mean in/out tokens |";
  out += slo.any() ? " goodput req/s (SLO met) |\n" : "\n";
  out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |";
  out += slo.any() ? " ---: |\n" : "\n";
  for (const auto& m : levels) {
    out += strprintf("| %s | %d/%d | %.1f | %.2f | %.1f | %s | %.0f/%.0f |", m.label.c_str(), m.n_ok, m.n_failed,
                     m.duration_s, m.request_throughput, m.output_throughput,
                     m.prompt_tokens >= 0 ? strprintf("%.1f", m.total_throughput).c_str() : "n/a",
                     m.mean_prompt_tokens, m.mean_output_tokens);
    if (slo.any()) {
      out += strprintf(" %.2f (%.0f %%) |", m.goodput, m.n_ok ? 100.0 * m.n_good / m.n_ok : 0.0);
    }
    out += "\n";
  }
  out += "\nlatency in ms:\n\n| load | metric | mean | p50 | p90 | p99 | max |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& m : levels) {
    const std::pair<const char*, const Distribution*> rows[] = {
        {"TTFT", &m.ttft_ms}, {"TPOT", &m.tpot_ms}, {"ITL", &m.itl_ms}, {"E2E", &m.e2e_ms}};
    for (const auto& [name, d] : rows) {
      if (d->n == 0) {
        out += strprintf("| %s | %s | - | - | - | - | - |\n", m.label.c_str(), name);
        continue;
      }
      out += strprintf("| %s | %s | %s | %s | %s | %s | %s |\n", m.label.c_str(), name, ms(d->mean).c_str(),
                       ms(d->p50).c_str(), ms(d->p90).c_str(), ms(d->p99).c_str(), ms(d->max).c_str());
    }
  }
  bool any_server = false;
  for (const auto& m : levels) any_server = any_server || m.server.available;
  if (any_server) {
    out += "\nthe server's own /metrics over each level (means; client's in parentheses):\n\n"
           "| load | requests | TTFT ms | ITL ms | E2E ms | generated tokens |\n| --- | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& m : levels) {
      if (!m.server.available) {
        out += strprintf("| %s | - | - | - | - | - |\n", m.label.c_str());
        continue;
      }
      out += strprintf("| %s | %.0f (%d) | %s (%s) | %s (%s) | %s (%s) | %.0f (%lld) |\n", m.label.c_str(),
                       m.server.n_requests, m.n_ok, ms(m.server.mean_ttft_ms).c_str(), ms(m.ttft_ms.mean).c_str(),
                       ms(m.server.mean_itl_ms).c_str(), ms(m.itl_ms.mean).c_str(), ms(m.server.mean_e2e_ms).c_str(),
                       ms(m.e2e_ms.mean).c_str(), m.server.generation_tokens, static_cast<long long>(m.output_tokens));
    }
    bool any_spec = false;
    for (const auto& m : levels) any_spec = any_spec || m.server.spec_mean_accepted_length > 0;
    if (any_spec) {
      out += "\nspeculative decoding (the server's counters):\n\n| load | accepted | mean accepted length |\n"
             "| --- | ---: | ---: |\n";
      for (const auto& m : levels) {
        out += strprintf("| %s | %.1f %% | %.2f |\n", m.label.c_str(), 100 * m.server.spec_acceptance_rate,
                         m.server.spec_mean_accepted_length);
      }
    }
  }
  for (const auto& m : levels) {
    if (m.n_failed > 0) {
      out += strprintf("\n%s: %d requests failed; first error: %s\n", m.label.c_str(), m.n_failed,
                       m.first_error.c_str());
    }
  }
  if (slo.any()) {
    out += "\nSLO:";
    if (slo.ttft_ms > 0) out += strprintf(" TTFT <= %g ms", slo.ttft_ms);
    if (slo.tpot_ms > 0) out += strprintf(" TPOT <= %g ms", slo.tpot_ms);
    out += "\n";
  }
  return out;
}

nlohmann::json level_json(const LevelMetrics& m) {
  nlohmann::json j = {{"label", m.label},
                      {"mode", m.open_loop ? "open-loop" : "closed-loop"},
                      {m.open_loop ? "request_rate" : "concurrency", m.load},
                      {"n_requests", m.n_requests},
                      {"n_ok", m.n_ok},
                      {"n_failed", m.n_failed},
                      {"duration_s", m.duration_s},
                      {"request_throughput", m.request_throughput},
                      {"output_throughput", m.output_throughput},
                      {"output_tokens", m.output_tokens},
                      {"mean_prompt_tokens", m.mean_prompt_tokens},
                      {"mean_output_tokens", m.mean_output_tokens},
                      {"ttft_ms", dist_json(m.ttft_ms)},
                      {"tpot_ms", dist_json(m.tpot_ms)},
                      {"itl_ms", dist_json(m.itl_ms)},
                      {"e2e_ms", dist_json(m.e2e_ms)},
                      {"n_good", m.n_good},
                      {"goodput", m.goodput}};
  if (m.prompt_tokens >= 0) {
    j["prompt_tokens"] = m.prompt_tokens;
    j["total_throughput"] = m.total_throughput;
  }
  if (!m.first_error.empty()) j["first_error"] = m.first_error;
  if (m.server.available) {
    j["server_metrics"] = {{"n_requests", m.server.n_requests},         {"mean_ttft_ms", m.server.mean_ttft_ms},
                           {"mean_itl_ms", m.server.mean_itl_ms},       {"mean_e2e_ms", m.server.mean_e2e_ms},
                           {"generation_tokens", m.server.generation_tokens},
                           {"spec_acceptance_rate", m.server.spec_acceptance_rate},
                           {"spec_mean_accepted_length", m.server.spec_mean_accepted_length}};
  }
  return j;
}

nlohmann::json json_report(const std::vector<LevelMetrics>& levels, const Slo& slo, const nlohmann::json& config) {
  nlohmann::json j;
  j["config"] = config;
  j["slo"] = {{"ttft_ms", slo.ttft_ms}, {"tpot_ms", slo.tpot_ms}};
  j["levels"] = nlohmann::json::array();
  for (const auto& m : levels) j["levels"].push_back(level_json(m));
  return j;
}

}  // namespace kairo::bench::serve
