#pragma once
// Each subcommand of the `kairo` binary lives in its own file under commands/ and registers itself here, so adding
// a command touches no other file.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kairo::tools {

// Adds the subcommand to `app`. The subcommand's callback stores its exit status with set_exit_code().
using CommandSetup = void (*)(CLI::App& app);

struct CommandEntry {
  const char* name;
  CommandSetup setup;
};

std::vector<CommandEntry>& command_registry();
void set_exit_code(int code);
int exit_code();

struct CommandRegistrar {
  CommandRegistrar(const char* name, CommandSetup setup) { command_registry().push_back({name, setup}); }
};

}  // namespace kairo::tools

#define KAIRO_REGISTER_COMMAND(name, setup) \
  static ::kairo::tools::CommandRegistrar kairo_command_registrar_##name(#name, setup)
