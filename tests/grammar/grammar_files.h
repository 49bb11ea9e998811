#pragma once
// The test grammars under tests/data/grammars, read whole.
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"

namespace kairo::grammar::testing {

inline std::string read_grammar_file(const std::string& name) {
  std::ifstream in(std::string(KAIRO_SOURCE_DIR) + "/tests/data/grammars/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kairo::grammar::testing
