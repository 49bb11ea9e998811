#pragma once
// Runs the built `kairo` binary on a pseudo-terminal, as a person at a terminal would: the test types keys (Ctrl-C
// included, which the terminal turns into SIGINT for the program) and reads what the program draws.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace kairo::testing {

class PtyProcess {
 public:
  // `args`: kairo's arguments. `env`: "NAME=value" to set, or "NAME" to unset, over the test's own environment.
  PtyProcess(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    char name[128];
    if (::ptsname_r(master_, name, sizeof name) != 0) return;
    winsize ws{};
    ws.ws_row = 24;
    ws.ws_col = 80;
    ::ioctl(master_, TIOCSWINSZ, &ws);
    // Everything the child needs is built before fork: after it, only async-signal-safe calls.
    std::vector<std::string> argv_s{KAIRO_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string key = entry.substr(0, entry.find('='));
      bool overridden = false;
      for (const std::string& o : env) overridden |= o.substr(0, o.find('=')) == key;
      if (!overridden) env_s.push_back(entry);
    }
    for (const std::string& o : env) {
      if (o.find('=') != std::string::npos) env_s.push_back(o);
    }
    std::vector<char*> argv, envp;
    for (std::string& s : argv_s) argv.push_back(s.data());
    for (std::string& s : env_s) envp.push_back(s.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setsid();
      const int slave = ::open(name, O_RDWR);
      if (slave < 0) ::_exit(126);
      ::ioctl(slave, TIOCSCTTY, 0);
      ::dup2(slave, 0);
      ::dup2(slave, 1);
      ::dup2(slave, 2);
      ::close(slave);
      ::close(master_);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
  }

  ~PtyProcess() {
    if (pid_ > 0 && status_ == kRunning) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }

  bool started() const { return pid_ > 0; }

  void type(std::string_view keys) {
    while (!keys.empty()) {
      const ssize_t n = ::write(master_, keys.data(), keys.size());
      if (n <= 0) return;
      keys.remove_prefix(static_cast<size_t>(n));
    }
  }

  // Reads until `text` appears after the previous match; true when it did within the timeout. Successive waits for
  // the same text (a prompt) find its successive appearances.
  bool wait_for(std::string_view text, double timeout_s = 20) {
    const auto deadline = deadline_in(timeout_s);
    for (;;) {
      const size_t pos = output_.find(text, matched_);
      if (pos != std::string::npos) {
        matched_ = pos + text.size();
        return true;
      }
      if (!read_some(deadline)) return false;
    }
  }

  // Reads until there is output past the previous match.
  bool wait_for_more(double timeout_s = 20) {
    const auto deadline = deadline_in(timeout_s);
    while (output_.size() <= matched_) {
      if (!read_some(deadline)) return false;
    }
    return true;
  }

  const std::string& output() const { return output_; }
  size_t mark() const { return matched_; }  // where the next wait_for starts looking
  std::string since(size_t mark) const { return output_.substr(mark, matched_ - mark); }

  // The exit status once the program ends, or -1 when it does not within the timeout (or dies by a signal).
  int wait_exit(double timeout_s = 20) {
    const auto deadline = deadline_in(timeout_s);
    while (status_ == kRunning) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : kKilled;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      read_some(std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
    }
    return status_ == kKilled ? -1 : status_;
  }

 private:
  static std::chrono::steady_clock::time_point deadline_in(double seconds) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }

  static constexpr int kRunning = -2;
  static constexpr int kKilled = -3;

  // False at the deadline or once the terminal is closed (the program ended).
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{master_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    const ssize_t n = ::read(master_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the program closed the terminal
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int master_ = -1;
  pid_t pid_ = -1;
  int status_ = kRunning;
  std::string output_;
  size_t matched_ = 0;
};

}  // namespace kairo::testing
