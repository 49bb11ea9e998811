#pragma once
// Finds special tokens (control, user-defined, unknown) inside text, so "<|im_start|>" becomes its id instead of
// being spelled out. Same result as llama.cpp's tokenizer_st_partition (longest token texts claim their matches
// first; user-defined tokens always, control/unknown ones only when parsing specials), but found in one pass with a
// trie so thousands of special tokens cost no more than a few.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace kairo::tokenizer {

struct Fragment {
  size_t offset = 0;          // raw text: [offset, offset + length) of the input
  size_t length = 0;
  int32_t token = kNoToken;   // a special token, or kNoToken for raw text
};

class SpecialMatcher {
 public:
  void build(const Vocab& vocab);
  // Raw fragments are never empty. Whitespace that LSTRIP/RSTRIP tokens swallow is in no fragment.
  std::vector<Fragment> partition(const Vocab& vocab, std::string_view text, bool parse_special) const;

 private:
  struct Node {
    int32_t token = kNoToken;
    std::vector<std::pair<uint8_t, int32_t>> children;
  };
  int32_t child(int32_t node, uint8_t byte) const;

  std::vector<Node> nodes_;          // nodes_[0] is the root
  int32_t root_children_[256] = {};  // root's children by byte (-1: none), the hot path
  std::vector<int32_t> priority_;    // by token id: 0 = matched first (longest text); -1 = not special
};

}  // namespace kairo::tokenizer
