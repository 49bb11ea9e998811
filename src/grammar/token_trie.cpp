#include "grammar/token_trie.h"

#include <algorithm>
#include <numeric>

namespace kairo::grammar {

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes) : token_bytes_(token_bytes) {
  std::vector<int32_t> order;
  for (int32_t id = 0; id < static_cast<int32_t>(token_bytes_.size()); ++id) {
    if (!token_bytes_[id].empty()) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return token_bytes_[a] < token_bytes_[b]; });
  nodes_.push_back(Node{});
  std::vector<uint32_t> path{0};  // path[d] = node at depth d of the current prefix
  const std::string* previous = nullptr;
  for (int32_t id : order) {
    const std::string& s = token_bytes_[id];
    size_t common = 0;
    if (previous) {
      const size_t limit = std::min({previous->size(), s.size(), path.size() - 1});
      while (common < limit && (*previous)[common] == s[common]) ++common;
    }
    while (path.size() > common + 1) {
      nodes_[path.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      Node n;
      n.byte = static_cast<uint8_t>(s[d]);
      n.depth = static_cast<uint32_t>(d + 1);
      n.token_begin = n.token_end = static_cast<uint32_t>(tokens_.size());
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(n);
    }
    Node& end = nodes_[path.back()];
    if (end.token_begin == end.token_end) end.token_begin = static_cast<uint32_t>(tokens_.size());
    tokens_.push_back(id);
    end.token_end = static_cast<uint32_t>(tokens_.size());
    max_depth_ = std::max<uint32_t>(max_depth_, static_cast<uint32_t>(s.size()));
    previous = &s;
  }
  while (!path.empty()) {
    nodes_[path.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
    path.pop_back();
  }
}

}  // namespace kairo::grammar
