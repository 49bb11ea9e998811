// kairo: run and serve large language models. Subcommands are in commands/, one file each.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "command_registry.h"

namespace kairo::tools {

std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

namespace {
int g_exit_code = 0;
}
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace kairo::tools

int main(int argc, char** argv) {
  CLI::App app{"kairo: run and serve large language models (GGUF) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kairo 0.1.0");
  auto entries = kairo::tools::command_registry();
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (const auto& e : entries) e.setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return kairo::tools::exit_code();
}
