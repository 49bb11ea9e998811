// What the engine does when it cannot go on: a lost device, or a broken invariant of its own bookkeeping. Either way
// the requests in flight end with an error that says what happened, later requests are refused with it, and the
// engine thread stays alive so that the server keeps answering (health, metrics, the error itself).
#include <cstdio>

#include "core/format.h"
#include "engine/engine.h"

namespace kairo::engine {

void Engine::fail_all(const std::string& error, FailureKind kind) {
  std::fprintf(stderr, "kairo engine: %s\n", error.c_str());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = error;
    failure_kind_ = kind;
    accepting_ = false;
  }
  take_inbox();
  for (auto& [id, seq] : seqs_) {
    if (seq->status == SeqStatus::Finished) continue;  // already answered, in the step that failed
    RequestOutput out;
    out.error = error;
    finish(*seq, FinishReason::Abort, out);
  }
  seqs_.clear();
}

void Engine::fail_broken_invariant(const InvariantViolation& e) {
  // From here on the block pool may hand one request's KV to another, so nothing may run on it again: not the
  // requests in flight, not new ones. Refusing them (and not resetting the pool under requests that hold its
  // blocks) keeps a bug from turning into wrong or leaked output; the operator restarts the server.
  kv_broken_ = true;
  size_t n_in_flight = 0;
  for (const auto& [id, seq] : seqs_) n_in_flight += seq->status != SeqStatus::Finished;
  std::fprintf(stderr,
               "\n"
               "kairo engine: ****************************************************************\n"
               "kairo engine: INTERNAL ERROR: a KV/scheduler invariant is broken\n"
               "kairo engine:   at %s:%d\n"
               "kairo engine:   %s\n"
               "kairo engine:   (check: %s)\n"
               "kairo engine: failing the requests in flight (%zu) and refusing new ones; restart the server,\n"
               "kairo engine: and please report this with the lines above\n"
               "kairo engine: ****************************************************************\n",
               e.file().c_str(), e.line(), e.message().c_str(), e.condition().c_str(), n_in_flight);
  fail_all(strprintf("internal error: the engine's KV bookkeeping broke an invariant (%s); the server takes no more "
                     "requests until it is restarted",
                     e.what()),
           FailureKind::BrokenInvariant);
}

std::string Engine::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

EngineFailure Engine::failure_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {failure_.empty() ? FailureKind::None : failure_kind_, failure_};
}

}  // namespace kairo::engine
