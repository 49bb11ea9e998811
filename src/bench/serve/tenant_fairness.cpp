#include "bench/serve/tenant_fairness.h"

#include <chrono>
#include <thread>

#include "bench/serve/report.h"
#include "core/format.h"

namespace kairo::bench::serve {
namespace {

// The foreground's sessions for one run: fresh prompts per run, so the shared run gets no prefix-cache hits from the
// run alone.
std::vector<Session> foreground_sessions(const SweepOptions& o, const LoadLevel& level, uint64_t salt) {
  WorkloadOptions w = o.workload;
  w.seed = o.workload.seed + 1000003 * salt;
  return make_sessions(w, requests_for_level(o, level));
}

std::string cell(const Distribution& d) {
  return d.n ? strprintf("%.1f / %.1f", d.p50, d.p99) : std::string("-");
}

}  // namespace

Result<std::vector<FairnessLevel>> run_fairness(const SweepOptions& o, const BackgroundLoad& bg) {
  if (o.levels.empty()) return Error{"no load levels: give --concurrency and/or --request-rate"};
  if (bg.n_requests < 1 || bg.input_tokens < 1 || bg.output_tokens < 1 || !(bg.lead_s >= 0)) {
    return Error{"--background-requests, --background-input-tokens and --background-output-tokens must be positive, "
                 "--background-lead-s not negative"};
  }
  ClientConfig bg_client = o.client;
  bg_client.api_key = bg.api_key;
  // One request under each key first: a wrong URL or key fails here, in a second, not after the first level.
  KAIRO_TRY_STATUS(check_server(o));
  SweepOptions bg_check = o;
  bg_check.client = bg_client;
  KAIRO_TRY_STATUS(check_server(bg_check));

  WorkloadOptions bg_work;
  bg_work.kind = WorkloadKind::Random;
  bg_work.endpoint = o.workload.endpoint;
  bg_work.input_tokens = bg.input_tokens;
  bg_work.output_tokens = bg.output_tokens;

  std::vector<FairnessLevel> out;
  for (size_t i = 0; i < o.levels.size(); ++i) {
    const LoadLevel& level = o.levels[i];
    FairnessLevel f;
    const LevelRun alone = run_level(o.client, foreground_sessions(o, level, 2 * i + 1), level, o.workload.seed + i,
                                     nullptr);
    if (!alone.error.empty()) return Error{level.label() + " alone: " + alone.error};
    f.alone = compute_metrics(alone, o.slo);

    bg_work.seed = o.workload.seed + 7919 * (i + 1);
    const std::vector<Session> bg_sessions = make_sessions(bg_work, bg.n_requests);
    LevelRun bg_run;
    std::thread burst([&] {
      bg_run = run_level(bg_client, bg_sessions, LoadLevel{false, static_cast<double>(bg.n_requests)},
                         o.workload.seed + 31 * i, nullptr);
    });
    std::this_thread::sleep_for(std::chrono::duration<double>(bg.lead_s));
    const LevelRun shared = run_level(o.client, foreground_sessions(o, level, 2 * i + 2), level,
                                      o.workload.seed + i, nullptr);
    burst.join();  // the next level starts on an idle server
    if (!shared.error.empty()) return Error{level.label() + " with the burst: " + shared.error};
    if (!bg_run.error.empty()) return Error{level.label() + " burst: " + bg_run.error};
    f.shared = compute_metrics(shared, o.slo);
    f.background = compute_metrics(bg_run, o.slo);
    out.push_back(std::move(f));
  }
  return out;
}

std::string fairness_markdown(const std::vector<FairnessLevel>& levels, const BackgroundLoad& bg) {
  std::string out = strprintf(
      "foreground alone, then during a background burst of %d requests (%d-word prompts, %d output tokens) that "
      "starts %.1f s earlier under another API key. TTFT and TPOT as p50 / p99 in ms.\n\n",
      bg.n_requests, bg.input_tokens, bg.output_tokens, bg.lead_s);
  out += "| load | TTFT alone | TTFT with burst | p99 TTFT ratio | TPOT alone | TPOT with burst | failed alone/with | "
         "burst TTFT | burst output tok/s |\n";
  out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& f : levels) {
    out += strprintf("| %s | %s | %s | %.2f | %s | %s | %d/%d | %s | %.1f |\n", f.alone.label.c_str(),
                     cell(f.alone.ttft_ms).c_str(), cell(f.shared.ttft_ms).c_str(), f.p99_ttft_ratio(),
                     cell(f.alone.tpot_ms).c_str(), cell(f.shared.tpot_ms).c_str(), f.alone.n_failed,
                     f.shared.n_failed, cell(f.background.ttft_ms).c_str(), f.background.output_throughput);
  }
  return out;
}

nlohmann::json fairness_json(const std::vector<FairnessLevel>& levels, const BackgroundLoad& bg,
                             const nlohmann::json& config) {
  nlohmann::json j;
  j["config"] = config;
  j["background"] = {{"requests", bg.n_requests},
                     {"input_tokens", bg.input_tokens},
                     {"output_tokens", bg.output_tokens},
                     {"lead_s", bg.lead_s}};
  j["levels"] = nlohmann::json::array();
  for (const auto& f : levels) {
    j["levels"].push_back({{"alone", level_json(f.alone)},
                           {"with_background", level_json(f.shared)},
                           {"background", level_json(f.background)},
                           {"p99_ttft_ratio", f.p99_ttft_ratio()}});
  }
  return j;
}

}  // namespace kairo::bench::serve
