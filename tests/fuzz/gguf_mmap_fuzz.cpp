// GGUF reader, mmap path: the input is written to a file and opened by path. It must behave exactly as the buffer
// path does on the same bytes (same success, same error), and a file's tensors must lie inside the mapping.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_util.h"
#include "gguf/gguf_file.h"

namespace {

std::string temp_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/kairo_fuzz_" + std::to_string(::getpid()) + ".gguf";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = temp_path();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) kairo::fuzz::setup_failed("cannot create " + path);
  if (size > 0 && std::fwrite(data, 1, size, out) != size) kairo::fuzz::setup_failed("cannot write " + path);
  std::fclose(out);

  auto mapped = kairo::gguf::File::open(path);
  auto parsed = kairo::gguf::File::parse(data, size, path);
  KAIRO_FUZZ_CHECK(mapped.ok() == parsed.ok(), mapped.ok() ? parsed.error().message : mapped.error().message);
  if (!mapped.ok()) {
    KAIRO_FUZZ_CHECK(mapped.error().message == parsed.error().message, mapped.error().message);
    return 0;
  }
  KAIRO_FUZZ_CHECK(mapped->file_size() == size, "mapped size differs");
  KAIRO_FUZZ_CHECK(mapped->tensors().size() == parsed->tensors().size(), "tensor counts differ");
  volatile uint8_t sink = 0;
  for (const auto& t : mapped->tensors()) {
    if (t.n_bytes > 0) sink = sink + t.data[0] + t.data[t.n_bytes - 1];
  }
  std::remove(path.c_str());
  return 0;
}
