#pragma once
// File helpers the conversion tests share.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kairo::convert::testing {

inline std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Per process: ctest runs two test processes at once, and two of them writing one file while the other read it made a
// load fail (LoraSynthTest in the CI's ASan stage).
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/kairo_convert_" + std::to_string(::getpid()) + "_" + name;
}

}  // namespace kairo::convert::testing
