#pragma once
// Out-of-memory tests: code runs in a forked child whose address space is capped (RLIMIT_AS), so mmap and malloc fail
// there as they do on a machine that has run out of memory, while the test process itself is unaffected. What the
// child returns comes back as text; how it ended (an exit, or a signal such as the SIGABRT of an exception that
// escaped) is the parent's to check.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

namespace kairo::testing {

// Sanitizer runtimes reserve and allocate memory their own way and abort on a failed allocation instead of
// throwing: the cap says nothing there. Under qemu-user (the aarch64 suite in CI) RLIMIT_AS limits the emulator,
// which reserves the guest's address space up front, so it says nothing there either; native builds run these tests.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(KAIRO_TESTS_UNDER_EMULATOR)
inline constexpr bool kAddressSpaceCapWorks = false;
#else
inline constexpr bool kAddressSpaceCapWorks = true;
#endif

inline constexpr int kEscapedException = 5;  // the child's exit code when fn threw

struct CappedRun {
  bool exited = false;  // ended by _exit, not by a signal
  int exit_code = -1;
  int signal = 0;
  std::string output;   // what fn returned (or what it threw)
  bool ok() const { return exited && exit_code == 0; }
  // For a failed check: how the child ended, when not by returning.
  std::string how() const {
    if (!exited) return "the child died of signal " + std::to_string(signal);
    if (exit_code == kEscapedException) return output.empty() ? "an exception escaped" : output;
    return "the child exited with " + std::to_string(exit_code);
  }
};

// Bytes the calling process has mapped (VmSize of /proc/self/status), 0 when unreadable.
inline uint64_t mapped_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

// The cap bounds new mappings, not the free memory the allocator already holds (what earlier tests freed): this takes
// all of it, but `keep_bytes` left free for the small allocations of the code under test (its error messages).
// Call it in the child after the cap; what it takes is never given back (the child exits).
inline void exhaust_free_memory(size_t keep_bytes) {
  // Through a volatile: the compiler may otherwise drop an allocation whose memory is never used.
  void* volatile block = std::malloc(keep_bytes);
  void* keep = block;
  for (size_t size = size_t{64} << 20; size >= 16; size /= 2) {
    while ((block = std::malloc(size)) != nullptr) {
    }
  }
  std::free(keep);
}

// Runs fn in a child that may map `headroom_bytes` more than it has mapped when fn starts (fn sets up what must not
// count, such as a loaded model, in `before_cap`, which runs first).
inline CappedRun run_with_address_space_cap(uint64_t headroom_bytes, const std::function<std::string()>& fn,
                                            const std::function<void()>& before_cap = {}) {
  CappedRun run;
  int fds[2];
  if (::pipe(fds) != 0) return run;
  std::fflush(nullptr);  // buffered output must not be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (before_cap) before_cap();
    const rlimit cap{mapped_bytes() + headroom_bytes, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &cap) != 0) ::_exit(3);
    // An exception must not unwind into the test framework, which would go on running tests in the child.
    std::string out;
    int code = 0;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("an exception escaped: ") + e.what();
      code = kEscapedException;
    } catch (...) {
      code = kEscapedException;
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) ::_exit(4);
      done += static_cast<size_t>(n);
    }
    ::_exit(code);  // no destructors, no atexit handlers: the parent's state in the child is not ours to tear down
  }
  ::close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) run.output.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exited = WIFEXITED(status);
  run.exit_code = run.exited ? WEXITSTATUS(status) : -1;
  run.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return run;
}

}  // namespace kairo::testing
