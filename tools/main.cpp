// kairo: run and serve large language models. Subcommands are in commands/, one file each.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "command_registry.h"
#include "core/out_of_memory.h"
#include "terminal/notes.h"

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

namespace {

// "kairo bench batch": the subcommands that were run, outermost first.
std::string command_path(const CLI::App& app) {
  std::string path = "kairo";
  for (const CLI::App* cmd = &app;;) {
    const auto subs = cmd->get_subcommands();
    if (subs.empty()) return path;
    cmd = subs.front();
    path += " " + cmd->get_name();
  }
}

// What to change when a command runs out of memory. Loading already says so (Model::load returns the planner's
// message); this is for what a command allocates afterwards (kairo run's KV cache covers its whole context,
// a benchmark's covers its prompt and batch sizes).
const char* out_of_memory_advice(const std::string& path) {
  if (path == "kairo run") {
    return "kairo run allocates a KV cache for the whole context up front: lower --ctx-size, pick a smaller model or "
           "quantization, or free memory (kairo plan --model FILE predicts what fits)";
  }
  if (path == "kairo bench model") return "lower --pp, --tg or --batch, or free memory";
  if (path == "kairo bench batch") {
    return "lower --batch, --prompt, --gen or --max-batched-tokens, or free memory";
  }
  return "free memory or use a smaller model (kairo plan --model FILE predicts what fits)";
}

}  // namespace

}  // namespace kairo::tools

int main(int argc, char** argv) {
  CLI::App app{"kairo: run and serve large language models (GGUF) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kairo 0.1.0");
  // Before or after the subcommand (`kairo -q serve ...` or `kairo serve ... --quiet`): every subcommand inherits
  // fallthrough, so an option it does not know goes to this one. Set when parsed, before any command runs.
  app.fallthrough();
  app.add_flag_callback("-q,--quiet", [] { kairo::tools::set_quiet(true); },
                        "No progress bars and no informational notes on stderr (warnings and errors are still printed)")
      ->trigger_on_parse();
  auto entries = kairo::tools::command_registry();
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (const auto& e : entries) e.setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc& e) {
    // The last boundary: an allocation failure no command turned into an Error is still a message and exit code 1,
    // never std::terminate. The message is built after the unwinding freed what the command held.
    const std::string path = kairo::tools::command_path(app);
    std::fprintf(stderr, "error: %s ran out of memory: %s%s; %s\n", path.c_str(),
                 kairo::describe_allocation_failure(e).c_str(), kairo::address_space_limit_note().c_str(),
                 kairo::tools::out_of_memory_advice(path));
    return 1;
  } catch (const kairo::StepOutOfMemory& e) {  // a step's device buffers (model/decoder.cpp)
    const std::string path = kairo::tools::command_path(app);
    std::fprintf(stderr, "error: %s ran out of memory: %s; %s\n", path.c_str(), e.what(),
                 kairo::tools::out_of_memory_advice(path));
    return 1;
  } catch (const std::exception& e) {  // anything else is still an error message and exit code 1
    const std::string path = kairo::tools::command_path(app);
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), e.what());
    return 1;
  }
  return kairo::tools::exit_code();
}
