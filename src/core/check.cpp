#include "core/check.h"

#include <string_view>

namespace kairo {

namespace {

// __FILE__ is whatever path the compiler was given (absolute under CMake): keep it from the source tree's top folder
// on, so messages (and the tests that pin them) do not depend on where the tree was checked out.
std::string source_relative(std::string_view file) {
  size_t from = 0;  // the last top folder in the path wins: the checkout itself may sit under a src/
  for (const std::string_view top : {"/src/", "/tests/", "/tools/", "/benchmarks/"}) {
    const size_t at = file.rfind(top);
    if (at != std::string_view::npos && at + 1 > from) from = at + 1;
  }
  return std::string(file.substr(from));
}

}  // namespace

InvariantViolation::InvariantViolation(const char* file, int line, const char* condition, const std::string& message)
    : std::logic_error(strprintf("%s:%d: %s (check: %s)", source_relative(file).c_str(), line, message.c_str(),
                                 condition)),
      file_(source_relative(file)),
      line_(line),
      condition_(condition),
      message_(message) {}

void throw_invariant_violation(const char* file, int line, const char* condition, const std::string& message) {
  throw InvariantViolation(file, line, condition, message);
}

}  // namespace kairo
