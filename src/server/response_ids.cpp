#include "server/response_ids.h"

#include <chrono>
#include <random>

namespace kairo::server {

namespace {

std::string random_from(std::string_view prefix, size_t n_chars, std::string_view alphabet) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s(prefix);
  s.reserve(prefix.size() + n_chars);
  for (size_t i = 0; i < n_chars; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

}  // namespace

std::string random_hex_id(std::string_view prefix, size_t n_chars) {
  return random_from(prefix, n_chars, "0123456789abcdef");
}

std::string random_alnum_id(std::string_view prefix, size_t n_chars) {
  return random_from(prefix, n_chars, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kairo::server
