#pragma once
// Ctrl-C while a reply streams stops the reply, not the program: SIGINT only raises a flag that the streaming loop
// polls. (At the prompt the terminal is raw, so Ctrl-C arrives there as a key instead.)
#include <csignal>

namespace kairo::tools::chat {

// SIGINT sets the flag from now on. SA_RESTART: a write to the terminal that SIGINT interrupts goes on rather than
// failing half done; readers that must notice Ctrl-C wait in poll(), which the signal always interrupts.
void catch_interrupts();
// True once for each Ctrl-C since the last call.
bool take_interrupt();

// Blocks SIGINT in this thread for its lifetime: threads started meanwhile (the engine's) inherit the mask, so the
// signal always lands on the main thread, whose poll() it must wake.
class SigintBlocked {
 public:
  SigintBlocked();
  ~SigintBlocked();
  SigintBlocked(const SigintBlocked&) = delete;
  SigintBlocked& operator=(const SigintBlocked&) = delete;

 private:
  sigset_t previous_{};
};

}  // namespace kairo::tools::chat
