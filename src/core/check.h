#pragma once
// Always-on checks of internal invariants: KAIRO_CHECK(cond, fmt, ...) stays in release builds, where assert() is
// compiled out. It guards the bookkeeping whose silent corruption would be worse than an error: KV block ref counts,
// free-list membership, which request holds a block. A broken one would otherwise hand one request's KV to another
// (wrong output, or one client's text leaking into another's) with nothing in the logs.
//
// A failed check throws InvariantViolation instead of aborting: the engine loop catches it, fails the requests in
// flight with its message, refuses later ones and keeps the server up to say so (the same contract as a lost device).
// It is a programmer error, never an expected failure (those are Result/Status values, core/result.h), so nothing
// else should catch it.
//
// Cost: one predictable branch per check; the message is formatted only when the check fails. Keep checks O(1) or
// O(blocks touched) per operation, never O(pool size) per token.
#include <stdexcept>
#include <string>

#include "core/format.h"

namespace kairo {

class InvariantViolation : public std::logic_error {
 public:
  // what(): "<file>:<line>: <message> (check: <condition>)", file relative to the source tree.
  InvariantViolation(const char* file, int line, const char* condition, const std::string& message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& condition() const { return condition_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string condition_, message_;
};

// Out of line and cold, so the inlined check is a compare and a branch.
[[noreturn, gnu::cold]] void throw_invariant_violation(const char* file, int line, const char* condition,
                                                       const std::string& message);

}  // namespace kairo

// KAIRO_CHECK(cond, printf-format, args...): cond is evaluated once; the arguments only when it is false.
#define KAIRO_CHECK(cond, ...)                                                                       \
  do {                                                                                               \
    if (!(cond)) [[unlikely]] {                                                                      \
      ::kairo::throw_invariant_violation(__FILE__, __LINE__, #cond, ::kairo::strprintf(__VA_ARGS__)); \
    }                                                                                                \
  } while (0)
