// `kairo bench roofline`: memory read bandwidth and int8/bf16 dot throughput of this machine, 1 thread and all.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/roofline.h"
#include "bench_registry.h"
#include "command_registry.h"
#include "devices/open_device.h"

namespace kairo::tools {
namespace {

struct RooflineArgs {
  double buffer_mb = 1024;
  int threads = 0;
  double seconds = 0.25;
  bool json = false;
  std::string device = "cpu";
};

// A GPU's roofline: the read bandwidth of its memory, measured by a streaming shader.
int run_device_roofline(const RooflineArgs& a) {
  auto dev = devices::open_device(a.device);
  if (!dev.ok()) {
    std::fprintf(stderr, "error: %s\n", dev.error().message.c_str());
    return 1;
  }
  auto gbs = devices::measure_device_read_bandwidth(**dev, static_cast<uint64_t>(a.buffer_mb * (1 << 20)));
  if (!gbs.ok()) {
    std::fprintf(stderr, "error: %s\n", gbs.error().message.c_str());
    return 1;
  }
  if (a.json) {
    nlohmann::json j{{"device", (*dev)->name()}, {"buffer_bytes", static_cast<uint64_t>(a.buffer_mb * (1 << 20))},
                     {"read_gbs", *gbs}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("roofline: %s, %.0f MiB read buffer\n\nceilings: read %.1f GB/s (streaming shader)\n",
                (*dev)->name().c_str(), a.buffer_mb, *gbs);
  }
  return 0;
}

int run_roofline(const RooflineArgs& a) {
  if (!(a.buffer_mb >= 1) || a.threads < 0 || !(a.seconds > 0)) {
    std::fprintf(stderr, "error: --buffer-mb must be >= 1, --threads >= 0 and --seconds > 0\n");
    return 1;
  }
  if (a.device != "cpu") return run_device_roofline(a);
  bench::RooflineOptions o;
  o.buffer_bytes = static_cast<size_t>(a.buffer_mb * (1 << 20));
  o.n_threads = a.threads;
  o.seconds_per_test = a.seconds;
  const bench::RooflineResult r = bench::measure_roofline(o);
  if (a.json) {
    nlohmann::json j;
    j["threads"] = r.n_threads;
    j["buffer_bytes"] = r.buffer_bytes;
    j["read_gbs"] = r.read_gbs;
    j["read_gbs_1t"] = r.read_gbs_1t;
    j["int8_tops"] = r.int8_tops;
    j["int8_tops_1t"] = r.int8_tops_1t;
    j["bf16_tflops"] = r.bf16_tflops;
    j["bf16_tflops_1t"] = r.bf16_tflops_1t;
    for (const auto& f : r.figures) {
      j["figures"].push_back(
          {{"name", f.name}, {"kernel", f.kernel}, {"unit", f.unit}, {"threads", f.n_threads}, {"value", f.value}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("roofline: %d threads, %.0f MiB read buffer\n\n", r.n_threads,
              static_cast<double>(r.buffer_bytes) / (1 << 20));
  std::printf("| what | kernel | threads | value |\n| --- | --- | ---: | ---: |\n");
  for (const auto& f : r.figures) {
    std::printf("| %s | %s | %d | %.2f %s |\n", f.name.c_str(), f.kernel.c_str(), f.n_threads, f.value,
                f.unit.c_str());
  }
  std::printf("\nceilings (all threads): read %.1f GB/s (plain streaming read; %.1f GB/s with software prefetch), "
              "int8 %.2f TOP/s, bf16 %.2f TFLOP/s\n",
              r.read_gbs, r.read_prefetch_gbs, r.int8_tops, r.bf16_tflops);
  return 0;
}

void setup_bench_roofline(CLI::App& bench) {
  auto args = std::make_shared<RooflineArgs>();
  CLI::App* cmd = bench.add_subcommand("roofline", "Measure memory read bandwidth and int8/bf16 dot throughput");
  cmd->add_option("--buffer-mb", args->buffer_mb, "Read buffer size in MiB (well above the last-level cache)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads for the all-threads figures (0: all cores)");
  cmd->add_option("--seconds", args->seconds, "Approximate seconds per measured run")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("--device", args->device, "cpu, vulkan[:N] or cuda[:N]: the read bandwidth of that device's memory")
      ->capture_default_str();
  cmd->callback([args] { set_exit_code(run_roofline(*args)); });
}

}  // namespace

KAIRO_REGISTER_BENCH(roofline, setup_bench_roofline);

}  // namespace kairo::tools
