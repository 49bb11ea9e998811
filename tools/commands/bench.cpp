// `kairo bench`: the parent of every benchmark kind; the kinds register themselves in bench_registry.h.
#include <algorithm>
#include <cstring>

#include "bench_registry.h"
#include "command_registry.h"

namespace kairo::tools {

std::vector<BenchEntry>& bench_registry() {
  static std::vector<BenchEntry> registry;
  return registry;
}

namespace {

void setup_bench(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Benchmarks: hardware ceilings, models, serving load");
  cmd->require_subcommand(1);
  auto entries = bench_registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (const auto& e : entries) e.setup(*cmd);
}

}  // namespace

KAIRO_REGISTER_COMMAND(bench, setup_bench);

}  // namespace kairo::tools
