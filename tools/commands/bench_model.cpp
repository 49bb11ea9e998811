// `kairo bench model --model M`: prefill and decode speed like llama-bench, against this machine's ceilings
// (see bench/model_bench.h). Markdown table by default, --json for machines.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench/model_bench.h"
#include "bench/roofline.h"
#include "bench_common.h"
#include "bench_registry.h"
#include "command_registry.h"
#include "device_option.h"

namespace kairo::tools {
namespace {

struct ModelArgs {
  std::string model;
  std::vector<int> pp{512};
  std::vector<int> tg{128};
  int batch = 512;
  int threads = 0;
  int reps = 3;
  std::optional<double> bandwidth_gbs;
  std::optional<double> int8_tops;
  double roofline_buffer_mb = 1024;
  double roofline_seconds = 0.25;
  std::vector<std::string> numerics{"relaxed", "exact"};
  bool json = false;
  std::string device = "cpu";
};

struct Ceilings {
  double read_gbs = 0;
  double read_prefetch_gbs = 0;  // measured only (0 when --bandwidth-gbs is given)
  double int8_tops = 0;
  bool read_measured = false;
  bool int8_measured = false;
};

Result<Ceilings> ceilings(const ModelArgs& a, int n_threads, kernels::Device& device) {
  Ceilings c;
  if (device.kind() != kernels::DeviceKind::Cpu) {
    // A GPU's ceiling is its own memory's read bandwidth, measured by a shader; int8 throughput is not measured.
    if (a.bandwidth_gbs) {
      c.read_gbs = *a.bandwidth_gbs;
    } else {
      KAIRO_TRY_ASSIGN(c.read_gbs, devices::measure_device_read_bandwidth(
                                       device, static_cast<uint64_t>(a.roofline_buffer_mb * (1 << 20))));
      c.read_measured = true;
    }
    if (a.int8_tops) c.int8_tops = *a.int8_tops;
    return c;
  }
  if (!a.bandwidth_gbs || !a.int8_tops) {
    bench::RooflineOptions o;
    o.buffer_bytes = static_cast<size_t>(a.roofline_buffer_mb * (1 << 20));
    o.n_threads = n_threads;
    o.seconds_per_test = a.roofline_seconds;
    const bench::RooflineResult r = bench::measure_roofline(o);
    c.read_gbs = r.read_gbs;
    c.read_prefetch_gbs = r.read_prefetch_gbs;
    c.int8_tops = r.int8_tops;
    c.read_measured = c.int8_measured = true;
  }
  if (a.bandwidth_gbs) {
    c.read_gbs = *a.bandwidth_gbs;
    c.read_prefetch_gbs = 0;
    c.read_measured = false;
  }
  if (a.int8_tops) {
    c.int8_tops = *a.int8_tops;
    c.int8_measured = false;
  }
  return c;
}

double pct(double v, double ceiling) { return ceiling > 0 ? 100.0 * v / ceiling : 0.0; }

int run_bench_model(const ModelArgs& a) {
  if (a.threads < 0 || a.reps <= 0 || a.batch <= 0 || !(a.roofline_buffer_mb >= 1) || !(a.roofline_seconds > 0) ||
      (a.bandwidth_gbs && !(*a.bandwidth_gbs > 0)) || (a.int8_tops && !(*a.int8_tops > 0))) {
    std::fprintf(stderr, "error: --threads must be >= 0; --reps, --batch, --bandwidth-gbs, --int8-tops, "
                         "--roofline-seconds positive; --roofline-buffer-mb >= 1\n");
    return 1;
  }
  auto model = load_model_on(a.model, a.device);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
    return 1;
  }
  model::Model& m = **model;
  ThreadPool pool(a.threads > 0 ? a.threads : ThreadPool::available_cores());
  bench::ModelBenchOptions o;
  o.n_prompt = a.pp;
  o.n_gen = a.tg;
  o.n_batch = a.batch;
  o.n_reps = a.reps;
  o.prefill_numerics.clear();
  for (const std::string& n : a.numerics) {
    if (n != "relaxed" && n != "exact") {
      std::fprintf(stderr, "error: --numerics takes relaxed and/or exact, not '%s'\n", n.c_str());
      return 1;
    }
    o.prefill_numerics.push_back(n == "exact" ? kernels::Numerics::Exact : kernels::Numerics::Relaxed);
  }
  auto result = bench::run_model_bench(m, o, pool);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.error().message.c_str());
    return 1;
  }
  // After the model runs, so the roofline's 1 GiB buffer never competes with the weights for memory.
  const Result<Ceilings> measured = ceilings(a, pool.n_threads(), m.device());
  if (!measured.ok()) {
    std::fprintf(stderr, "error: %s\n", measured.error().message.c_str());
    return 1;
  }
  const Ceilings& ceil = *measured;
  const bench::ModelCost& cost = result->cost;

  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["arch"] = m.config().arch;
    j["types"] = matrix_types(m.file());
    j["file_bytes"] = m.file().file_size();
    j["params"] = m.weights().n_params;
    j["backend"] = m.device().name();
    j["threads"] = pool.n_threads();
    j["decode_bytes_per_token"] = cost.decode_bytes_per_token;
    j["matmul_params_per_token"] = cost.layer_matmul_params + cost.output_params;
    j["read_gbs"] = ceil.read_gbs;
    j["read_gbs_source"] = ceil.read_measured ? "measured" : "given";
    if (ceil.read_prefetch_gbs > 0) j["read_prefetch_gbs"] = ceil.read_prefetch_gbs;
    j["int8_tops"] = ceil.int8_tops;
    j["int8_tops_source"] = ceil.int8_measured ? "measured" : "given";
    j["tests"] = nlohmann::json::array();
    for (const auto& t : result->tests) {
      nlohmann::json tj = {{"test", t.name},           {"n_prompt", t.n_prompt},   {"n_gen", t.n_gen},
                           {"reps", t.seconds.size()}, {"avg_ts", t.avg_tps},      {"stddev_ts", t.stddev_tps},
                           {"samples_s", t.seconds}};
      const int n = t.n_prompt + t.n_gen;
      if (t.n_gen > 0) {
        const double gbs = t.bytes / n * t.avg_tps * 1e-9;
        tj["gbs"] = gbs;
        tj["pct_of_read_bandwidth"] = pct(gbs, ceil.read_gbs);
        if (ceil.read_prefetch_gbs > 0) tj["pct_of_prefetch_read_bandwidth"] = pct(gbs, ceil.read_prefetch_gbs);
      } else {
        const double tops = t.ops / n * t.avg_tps * 1e-12;
        tj["tops"] = tops;
        if (ceil.int8_tops > 0) tj["pct_of_int8"] = pct(tops, ceil.int8_tops);
      }
      j["tests"].push_back(tj);
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("model: %s (%s), %s\n", a.model.c_str(), model_label(m).c_str(),
              human_bytes(m.file().file_size()).c_str());
  const std::string int8 = ceil.int8_tops > 0 ? strprintf("%.2f TOP/s (%s)", ceil.int8_tops,
                                                          ceil.int8_measured ? "measured now" : "given")
                                               : std::string("not measured on this device (give --int8-tops)");
  std::printf("decode reads %s of weights per token; ceilings: read %.1f GB/s (%s), int8 %s\n",
              human_bytes(cost.decode_bytes_per_token).c_str(), ceil.read_gbs,
              ceil.read_measured ? "measured now" : "given", int8.c_str());
  if (ceil.read_prefetch_gbs > 0)
    std::printf("(read: a plain streaming read, as ../shared/BASELINES.md measures it; with software prefetch, as the "
                "decode kernels read, %.1f GB/s)\n",
                ceil.read_prefetch_gbs);
  std::printf("\n");
  std::printf("| model | backend | threads | test | t/s | GB/s | %% of read bw | TOP/s | %% of int8 |\n");
  std::printf("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& t : result->tests) {
    const int n = t.n_prompt + t.n_gen;
    std::string bw = "| | ", ops = "| | ";
    if (t.n_gen > 0) {
      const double gbs = t.bytes / n * t.avg_tps * 1e-9;
      bw = strprintf("| %.1f | %.0f %% ", gbs, pct(gbs, ceil.read_gbs));
    } else {
      const double tops = t.ops / n * t.avg_tps * 1e-12;
      ops = ceil.int8_tops > 0 ? strprintf("| %.3f | %.0f %% ", tops, pct(tops, ceil.int8_tops))
                               : strprintf("| %.3f | — ", tops);
    }
    std::printf("| %s | %s | %d | %s | %.2f ± %.2f %s%s|\n", model_label(m).c_str(), m.device().name().c_str(),
                pool.n_threads(), t.name.c_str(), t.avg_tps, t.stddev_tps, bw.c_str(), ops.c_str());
  }
  return 0;
}

void setup_bench_model(CLI::App& bench) {
  auto a = std::make_shared<ModelArgs>();
  CLI::App* cmd = bench.add_subcommand("model", "Prefill (pp) and decode (tg) speed of a model, like llama-bench");
  add_device_option(cmd, a->device);
  cmd->add_option("--model,-m", a->model, "GGUF model file")->required();
  cmd->add_option("--pp", a->pp, "Prompt lengths to prefill, comma-separated (0: none)")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--tg", a->tg, "Tokens to decode, comma-separated (0: none)")->delimiter(',')->capture_default_str();
  cmd->add_option("--batch", a->batch, "Prompt tokens per forward step")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)");
  cmd->add_option("--reps", a->reps, "Repetitions of each test")->capture_default_str();
  cmd->add_option("--bandwidth-gbs", a->bandwidth_gbs, "Read bandwidth to compare with (default: measure it now)");
  cmd->add_option("--int8-tops", a->int8_tops, "int8 throughput to compare with (default: measure it now)");
  cmd->add_option("--roofline-buffer-mb", a->roofline_buffer_mb, "Buffer of the bandwidth measurement")
      ->capture_default_str();
  cmd->add_option("--roofline-seconds", a->roofline_seconds, "Seconds per roofline figure")->capture_default_str();
  cmd->add_option("--numerics", a->numerics,
                  "Prefill numerics, comma-separated: relaxed (what sampled requests get: AMX bf16 tiles where faster) "
                  "and/or exact (batch-invariant, what temperature-0 requests get)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { set_exit_code(run_bench_model(*a)); });
}

}  // namespace

KAIRO_REGISTER_BENCH(model, setup_bench_model);

}  // namespace kairo::tools
