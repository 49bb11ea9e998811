#pragma once
// Errors inside the interpreter travel as a C++ exception so that the deep recursion of a tree-walking evaluator
// does not have to thread a Result through every operator; render() catches it and returns an Error value, so no
// exception ever leaves the jinja module.
#include <stdexcept>
#include <string>

namespace kairo::jinja {

struct TemplateError : std::runtime_error {
  enum class Kind { Syntax, Runtime, Raised, Limit };
  TemplateError(std::string message, Kind kind = Kind::Runtime, int line = 0)
      : std::runtime_error(message), message(std::move(message)), kind(kind), line(line) {}
  std::string message;
  Kind kind;
  int line;  // 1-based template line, 0 while unknown
};

[[noreturn]] inline void fail(std::string message) { throw TemplateError(std::move(message)); }

}  // namespace kairo::jinja
