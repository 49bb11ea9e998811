#pragma once
// Runs the built `kairo` binary and captures its exit status, stdout and stderr.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace kairo::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `shell_prefix` runs before the binary in the same shell, e.g. "ulimit -v 1048576; ".
inline CommandResult run_kairo(const std::string& args, const std::string& shell_prefix = "") {
  static int counter = 0;
  const std::string err_path = ::testing::TempDir() + "/kairo_stderr_" + std::to_string(::getpid()) + "_" +
                               std::to_string(counter++);
  const std::string cmd = shell_prefix + std::string(KAIRO_EXE) + " " + args + " 2>" + err_path;
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}

}  // namespace kairo::testing
