#pragma once
// Helpers shared by the libFuzzer targets: where fixtures live, and a cursor that takes typed choices off the front
// of a fuzz input so one input both picks a configuration and carries the payload.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace kairo::fuzz {

// ../shared beside the checkout (KAIRO_SHARED_DIR overrides it at run time, e.g. for a relocated binary).
inline std::string shared_path(const std::string& rel) {
  const char* env = std::getenv("KAIRO_SHARED_DIR");
  return std::string(env ? env : KAIRO_SHARED_DIR) + "/" + rel;
}
inline std::string source_path(const std::string& rel) {
  const char* env = std::getenv("KAIRO_SOURCE_DIR");
  return std::string(env ? env : KAIRO_SOURCE_DIR) + "/" + rel;
}

// A harness invariant that does not hold: print it and abort, so libFuzzer records the input as a crash.
[[noreturn]] inline void invariant_failed(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what.c_str());
  std::abort();
}
#define KAIRO_FUZZ_CHECK(cond, what)                                                        \
  do {                                                                                      \
    if (!(cond)) ::kairo::fuzz::invariant_failed(__FILE__, __LINE__, std::string(#cond) + ": " + (what)); \
  } while (0)

// Setup that cannot work (a fixture is missing): not a finding, but the run must not pass silently either.
[[noreturn]] inline void setup_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz setup failed: %s\n", what.c_str());
  std::exit(2);
}

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{byte()} << (8 * i);
    return v;
  }
  // The rest of the input.
  std::string_view rest() {
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return s;
  }
  size_t remaining() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace kairo::fuzz
