// `kairo bench serve --url U`: load generator for any OpenAI-compatible server (kairo, llama-server, vLLM):
// closed-loop concurrency sweeps and open-loop Poisson rates, TTFT/TPOT/ITL/E2E percentiles, throughput, goodput.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/serve/report.h"
#include "bench/serve/svg_plot.h"
#include "bench/serve/sweep.h"
#include "bench/serve/tenant_fairness.h"
#include "bench_registry.h"
#include "command_registry.h"
#include "core/format.h"
#include "terminal/notes.h"
#include "terminal/progress_bar.h"

namespace kairo::tools {
namespace {

namespace bs = bench::serve;

// One bar per load level, replaced when the next level starts: requests done, their rate, the ETA, and the output
// tokens per second so far.
auto level_progress_bars() {
  auto bar = std::make_shared<std::unique_ptr<ProgressBar>>();
  auto level = std::make_shared<std::string>();
  return [bar, level](const std::string& label, int done, int total, int64_t tokens, double elapsed_s) {
    if (!*bar || *level != label) {
      *bar = std::make_unique<ProgressBar>(label + " requests", static_cast<uint64_t>(total), ProgressUnit::Items,
                                           true);
      *level = label;
    }
    (*bar)->update(static_cast<uint64_t>(done),
                   strprintf("%.1f output tok/s", elapsed_s > 0 ? static_cast<double>(tokens) / elapsed_s : 0.0));
    if (done >= total) bar->reset();  // clears the line for the next level or the report
  };
}

struct BenchServeArgs {
  std::string url, model, api_key, endpoint = "completions", workload = "random", concurrency, request_rate;
  std::string json_out, plot;
  int input_tokens = 128, output_tokens = 64, long_input_tokens = 1024, long_output_tokens = 256;
  double long_fraction = 0.2;
  int turns = 3, prefix_tokens = 256, num_requests = 0;
  double slo_ttft_ms = 0, slo_tpot_ms = 0, timeout_s = 600, temperature = 0;
  uint64_t seed = 1;
  bool no_ignore_eos = false, progress = false, no_progress = false;
  bs::BackgroundLoad background;  // used when background.api_key is set
};

Result<std::vector<double>> parse_list(const std::string& text, const char* flag) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(v > 0)) {
      return Error{strprintf("%s %s: expected positive numbers separated by commas, e.g. 1,4,16", flag,
                             quote_for_error(text).c_str())};
    }
    out.push_back(v);
  }
  return out;
}

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) return Error{strprintf("cannot write %s", path.c_str())};
  return {};
}

Result<bs::SweepOptions> make_options(const BenchServeArgs& a) {
  bs::SweepOptions o;
  KAIRO_TRY_ASSIGN(o.client.url, bs::parse_url(a.url));
  KAIRO_TRY_ASSIGN(o.workload.kind, bs::parse_workload_kind(a.workload));
  if (a.endpoint == "chat") {
    o.workload.endpoint = bs::Endpoint::Chat;
  } else if (a.endpoint != "completions") {
    return Error{strprintf("--endpoint %s: use completions or chat", quote_for_error(a.endpoint).c_str())};
  }
  if (a.input_tokens < 1 || a.output_tokens < 1 || a.long_input_tokens < 1 || a.long_output_tokens < 1 ||
      a.turns < 1 || a.prefix_tokens < 0 || a.num_requests < 0 || !(a.timeout_s > 0) ||
      !(a.long_fraction >= 0 && a.long_fraction <= 1)) {
    return Error{"token counts, --turns and --timeout-s must be positive, --long-fraction in [0, 1]"};
  }
  o.workload.input_tokens = a.input_tokens;
  o.workload.output_tokens = a.output_tokens;
  o.workload.long_fraction = a.long_fraction;
  o.workload.long_input_tokens = a.long_input_tokens;
  o.workload.long_output_tokens = a.long_output_tokens;
  o.workload.turns = a.turns;
  o.workload.prefix_tokens = a.prefix_tokens;
  o.workload.seed = a.seed;
  o.client.api_key = a.api_key;
  o.client.timeout_s = a.timeout_s;
  o.client.ignore_eos = !a.no_ignore_eos;
  o.client.temperature = a.temperature;
  o.n_requests = a.num_requests;
  o.slo.ttft_ms = a.slo_ttft_ms;
  o.slo.tpot_ms = a.slo_tpot_ms;
  if (!a.concurrency.empty()) {
    KAIRO_TRY_ASSIGN(const auto cs, parse_list(a.concurrency, "--concurrency"));
    for (double c : cs) o.levels.push_back({false, std::floor(c)});
  }
  if (!a.request_rate.empty()) {
    KAIRO_TRY_ASSIGN(const auto rs, parse_list(a.request_rate, "--request-rate"));
    for (double r : rs) o.levels.push_back({true, r});
  }
  if (o.levels.empty()) o.levels.push_back({false, 1});
  if (!a.no_progress && (a.progress || progress_wanted(quiet()))) o.progress = level_progress_bars();
  if (!a.model.empty()) {
    o.client.model = a.model;
  } else {
    auto found = bs::discover_model(o.client.url, a.api_key, std::min(a.timeout_s, 10.0));
    o.client.model = found.ok() ? *found : "default";
  }
  return o;
}

nlohmann::json config_json(const BenchServeArgs& a, const bs::SweepOptions& o) {
  return {{"url", a.url},
          {"model", o.client.model},
          {"endpoint", o.workload.kind == bs::WorkloadKind::MultiTurn ? "chat" : a.endpoint},
          {"workload", bs::workload_kind_name(o.workload.kind)},
          {"input_tokens", a.input_tokens},
          {"output_tokens", a.output_tokens},
          {"long_fraction", a.long_fraction},
          {"long_input_tokens", a.long_input_tokens},
          {"long_output_tokens", a.long_output_tokens},
          {"turns", a.turns},
          {"prefix_tokens", a.prefix_tokens},
          {"ignore_eos", o.client.ignore_eos},
          {"temperature", a.temperature},
          {"seed", a.seed}};
}

// --background-api-key: the foreground alone, then during another tenant's burst (bench/serve/tenant_fairness.h).
int run_fairness(const BenchServeArgs& a, const bs::SweepOptions& options) {
  auto result = bs::run_fairness(options, a.background);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.error().message.c_str());
    return 1;
  }
  std::printf("# kairo bench serve: %s, model %s, workload %s, against a second tenant's burst\n\n", a.url.c_str(),
              options.client.model.c_str(), bs::workload_kind_name(options.workload.kind));
  std::printf("%s", bs::fairness_markdown(*result, a.background).c_str());
  int rc = 0;
  if (!a.json_out.empty()) {
    const auto j = bs::fairness_json(*result, a.background, config_json(a, options));
    if (auto st = write_file(a.json_out, j.dump(2) + "\n"); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
      rc = 1;
    }
  }
  for (const auto& f : *result) {
    if (f.alone.n_ok == 0 || f.shared.n_ok == 0) rc = 1;
  }
  return rc;
}

int run_bench_serve(const BenchServeArgs& a) {
  auto options = make_options(a);
  if (!options.ok()) {
    std::fprintf(stderr, "error: %s\n", options.error().message.c_str());
    return 1;
  }
  if (!a.background.api_key.empty()) return run_fairness(a, *options);
  auto result = bs::run_sweep(*options);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.error().message.c_str());
    return 1;
  }
  std::printf("# kairo bench serve: %s, model %s, workload %s\n\n", a.url.c_str(), options->client.model.c_str(),
              bs::workload_kind_name(options->workload.kind));
  std::printf("%s", bs::markdown_report(result->levels, options->slo).c_str());
  int rc = 0;
  if (!a.json_out.empty()) {
    const auto j = bs::json_report(result->levels, options->slo, config_json(a, *options));
    if (auto st = write_file(a.json_out, j.dump(2) + "\n"); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
      rc = 1;
    }
  }
  if (!a.plot.empty()) {
    const std::string title = strprintf("%s, %s workload: throughput vs p99 latency", options->client.model.c_str(),
                                        bs::workload_kind_name(options->workload.kind));
    if (auto st = write_file(a.plot, bs::svg_plot(result->levels, title)); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
      rc = 1;
    }
  }
  for (const auto& m : result->levels) {
    if (m.n_ok == 0) rc = 1;  // a level where nothing succeeded is a failed benchmark
  }
  return rc;
}

void setup_bench_serve(CLI::App& bench) {
  auto a = std::make_shared<BenchServeArgs>();
  CLI::App* cmd = bench.add_subcommand("serve", "Load-test an OpenAI-compatible server (TTFT, TPOT, ITL, throughput)");
  cmd->add_option("--url", a->url, "Server base URL, e.g. http://127.0.0.1:8080")->required();
  cmd->add_option("--model", a->model, "Model name to send (default: the first of GET /v1/models)");
  cmd->add_option("--api-key", a->api_key, "Bearer token");
  cmd->add_option("--endpoint", a->endpoint, "completions or chat (multi-turn always uses chat)")->capture_default_str();
  cmd->add_option("--workload", a->workload, "random, mixed or multi-turn (shared-prefix chat)")->capture_default_str();
  cmd->add_option("--input-tokens", a->input_tokens, "Prompt length in words (~tokens)")->capture_default_str();
  cmd->add_option("--output-tokens", a->output_tokens, "max_tokens per request")->capture_default_str();
  cmd->add_option("--long-fraction", a->long_fraction, "mixed: share of long requests")->capture_default_str();
  cmd->add_option("--long-input-tokens", a->long_input_tokens, "mixed: long prompt length")->capture_default_str();
  cmd->add_option("--long-output-tokens", a->long_output_tokens, "mixed: long output length")->capture_default_str();
  cmd->add_option("--turns", a->turns, "multi-turn: user turns per conversation")->capture_default_str();
  cmd->add_option("--prefix-tokens", a->prefix_tokens, "multi-turn: shared system prompt length")->capture_default_str();
  cmd->add_option("--num-requests", a->num_requests, "Requests per level (default max(16, 4 × concurrency) or "
                                                     "max(16, 8 × rate))");
  cmd->add_option("--concurrency", a->concurrency, "Closed-loop sweep, e.g. 1,4,16");
  cmd->add_option("--request-rate", a->request_rate, "Open-loop Poisson sweep in requests/s, e.g. 0.5,1,2");
  cmd->add_option("--slo-ttft-ms", a->slo_ttft_ms, "Goodput: TTFT bound in ms");
  cmd->add_option("--slo-tpot-ms", a->slo_tpot_ms, "Goodput: TPOT bound in ms");
  cmd->add_option("--timeout-s", a->timeout_s, "Per-request deadline")->capture_default_str();
  cmd->add_option("--temperature", a->temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Prompt and arrival seed")->capture_default_str();
  cmd->add_flag("--no-ignore-eos", a->no_ignore_eos, "Let the model stop early (default: exactly max_tokens)");
  cmd->add_option("--json-out", a->json_out, "Write the results as JSON to this file");
  cmd->add_option("--plot", a->plot, "Write an SVG plot of throughput vs p99 latency to this file");
  cmd->add_option("--background-api-key", a->background.api_key,
                  "Fairness run: each level alone, then during a burst sent under this second key");
  cmd->add_option("--background-requests", a->background.n_requests, "Fairness run: requests in the burst")
      ->capture_default_str();
  cmd->add_option("--background-input-tokens", a->background.input_tokens, "Fairness run: burst prompt length")
      ->capture_default_str();
  cmd->add_option("--background-output-tokens", a->background.output_tokens, "Fairness run: burst max_tokens")
      ->capture_default_str();
  cmd->add_option("--background-lead-s", a->background.lead_s,
                  "Fairness run: seconds the burst starts before the foreground")
      ->capture_default_str();
  cmd->add_flag("--progress", a->progress, "Progress bar even when stderr is not a terminal");
  cmd->add_flag("--no-progress", a->no_progress, "No progress bar");
  cmd->callback([a] { set_exit_code(run_bench_serve(*a)); });
}

}  // namespace

KAIRO_REGISTER_BENCH(serve, setup_bench_serve);

}  // namespace kairo::tools
