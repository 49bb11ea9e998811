#pragma once
// Expected failures (bad files, bad requests, exhausted pools) are values, not exceptions: a Result<T> holds either
// a T or an Error whose message tells the user what is wrong and what to change.
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kairo {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  static Status success() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(!ok()); return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace kairo

// Propagate an error from an expression returning Result/Status.
#define KAIRO_CONCAT_INNER(a, b) a##b
#define KAIRO_CONCAT(a, b) KAIRO_CONCAT_INNER(a, b)
#define KAIRO_TRY_STATUS(expr)                       \
  do {                                               \
    auto _kairo_status = (expr);                     \
    if (!_kairo_status.ok()) return _kairo_status.error(); \
  } while (0)
#define KAIRO_TRY_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.error();          \
  lhs = std::move(tmp).value()
#define KAIRO_TRY_ASSIGN(lhs, expr) KAIRO_TRY_ASSIGN_IMPL(KAIRO_CONCAT(_kairo_result_, __LINE__), lhs, expr)
