#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace kairo {
namespace {

// Pages released after a copy still read back the file's bytes (they fault in again); out-of-range requests are
// ignored rather than touching memory outside the mapping.
TEST(MappedFile, ReleasedPagesStillReadTheFile) {
  const std::string path = testing::TempDir() + "/kairo_release_" + std::to_string(::getpid());
  std::vector<uint8_t> bytes(5 * 4096 + 123);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31 + 7);
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  auto m = MappedFile::open(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const MappedFile& file = **m;
  uint64_t sum = 0;
  for (size_t i = 0; i < file.size(); ++i) sum += file.data()[i];  // make the pages resident first
  file.release_pages(file.data() + 100, 3 * 4096 + 50);
  file.release_pages(file.data(), file.size());
  file.release_pages(file.data() + file.size() - 10, 11);        // past the end: ignored
  file.release_pages(file.data() - 4096, 4096);                  // before the start: ignored
  int x = 0;
  file.release_pages(&x, sizeof x);                               // not in the mapping: ignored
  uint64_t again = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    ASSERT_EQ(file.data()[i], bytes[i]) << i;
    again += file.data()[i];
  }
  EXPECT_EQ(again, sum);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kairo
