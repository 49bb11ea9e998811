#pragma once
// The vocabulary's token bytes as a trie in preorder: a node's subtree is the index range [i, subtree_end), so
// a walk that finds a prefix impossible skips all tokens under it in one step. Tokens whose bytes are empty
// (control tokens, which print nothing) are left out: the grammar never allows them, end-of-generation tokens
// are decided by the matcher's can_end() instead.
#include <cstdint>
#include <string>
#include <vector>

namespace kairo::grammar {

class TokenTrie {
 public:
  explicit TokenTrie(const std::vector<std::string>& token_bytes);

  struct Node {
    uint8_t byte = 0;          // the byte on the edge into this node (unused for the root)
    uint32_t depth = 0;        // bytes from the root
    uint32_t subtree_end = 0;  // one past the last node of this node's subtree
    uint32_t token_begin = 0;  // tokens whose bytes end here: tokens()[token_begin, token_end)
    uint32_t token_end = 0;
  };

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  const std::string& bytes(int32_t token) const { return token_bytes_[token]; }
  int32_t n_vocab() const { return static_cast<int32_t>(token_bytes_.size()); }
  uint32_t max_depth() const { return max_depth_; }

 private:
  std::vector<std::string> token_bytes_;
  std::vector<Node> nodes_;
  std::vector<int32_t> tokens_;
  uint32_t max_depth_ = 0;
};

}  // namespace kairo::grammar
