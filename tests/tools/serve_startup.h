#pragma once
// Starts `kairo serve ARGS --port 0`, reads its stderr until it says it is ready (or exits), then stops it with
// SIGTERM: for tests of what the server prints at startup.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <regex>
#include <string>

namespace kairo::testing {

struct ServeStartup {
  std::string log;     // stderr up to the "ready" line (or everything, if it exited)
  int exit_code = -1;  // after SIGTERM, or on its own
  int signal = 0;      // the signal that ended it
  // Started and stopped on our SIGTERM: the server announces "ready" only once SIGTERM is handled, so even a
  // SIGTERM sent the moment it is read drains and exits 0.
  bool served() const { return exit_code == 0 && signal == 0; }
};

// The deadline only guards against a hang; nothing here is timed.
inline ServeStartup start_and_stop_serve(const std::string& args) {
  ServeStartup out;
  int err_pipe[2];
  if (::pipe(err_pipe) != 0) return out;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err_pipe[1], STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    const std::string cmd = std::string(KAIRO_EXE) + " serve --port 0 --threads 1 --no-access-log " + args;
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool ready = false, eof = false;
  char buf[4096];
  while (!ready && !eof && std::chrono::steady_clock::now() < deadline) {
    pollfd p{err_pipe[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) {
      eof = true;
    } else {
      out.log.append(buf, static_cast<size_t>(n));
      ready = out.log.find("kairo serve: ready:") != std::string::npos;
    }
  }
  if (!eof) ::kill(pid, SIGTERM);
  while (::read(err_pipe[0], buf, sizeof buf) > 0) {  // drain what it prints while stopping
  }
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return out;
}

// N of the startup line "kairo serve: KV cache: N tokens (...)"; -1 when there is none.
inline int64_t printed_kv_tokens(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("kairo serve: KV cache: ([0-9]+) tokens \\("))) return -1;
  return std::stoll(m[1]);
}

}  // namespace kairo::testing
