#include "chat/interrupt.h"

#include <pthread.h>

#include <atomic>

namespace kairo::tools::chat {
namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the SIGINT handler needs a lock-free flag");

void on_sigint(int) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
}

bool take_interrupt() { return g_interrupted.exchange(false, std::memory_order_relaxed); }

SigintBlocked::SigintBlocked() {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous_);
}

SigintBlocked::~SigintBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace kairo::tools::chat
