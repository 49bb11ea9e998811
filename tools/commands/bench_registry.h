#pragma once
// `kairo bench KIND`: each benchmark kind (roofline, serve, model, batch, ...) lives in its own bench_<kind>.cpp and
// registers itself here; commands/bench.cpp makes them subcommands of `kairo bench`. Adding a kind touches no other
// file.
#include <CLI/CLI.hpp>

#include <vector>

namespace kairo::tools {

// Adds the kind as a subcommand of the `bench` subcommand; its callback stores the exit status with set_exit_code().
using BenchSetup = void (*)(CLI::App& bench);

struct BenchEntry {
  const char* name;
  BenchSetup setup;
};

std::vector<BenchEntry>& bench_registry();

struct BenchRegistrar {
  BenchRegistrar(const char* name, BenchSetup setup) { bench_registry().push_back({name, setup}); }
};

}  // namespace kairo::tools

#define KAIRO_REGISTER_BENCH(name, setup) \
  static ::kairo::tools::BenchRegistrar kairo_bench_registrar_##name(#name, setup)
