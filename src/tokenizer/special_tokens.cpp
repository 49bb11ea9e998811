#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <map>

namespace kairo::tokenizer {
namespace {

constexpr uint32_t kSpecialAttrs = kAttrControl | kAttrUserDefined | kAttrUnknown;
constexpr int32_t kStripped = -2;  // an interval of whitespace swallowed by an LSTRIP/RSTRIP token

bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

struct Candidate {
  int32_t priority;
  size_t pos;
  size_t len;
  int32_t token;
};

}  // namespace

int32_t SpecialMatcher::child(int32_t node, uint8_t byte) const {
  for (const auto& [b, c] : nodes_[node].children) {
    if (b == byte) return c;
  }
  return -1;
}

void SpecialMatcher::build(const Vocab& vocab) {
  nodes_.assign(1, Node{});
  std::fill(std::begin(root_children_), std::end(root_children_), -1);
  priority_.assign(vocab.tokens.size(), -1);

  std::vector<int32_t> ids;
  for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
    if (vocab.tokens[id].attr & kSpecialAttrs) ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return vocab.tokens[a].text.size() > vocab.tokens[b].text.size();
  });
  for (size_t rank = 0; rank < ids.size(); ++rank) {
    const int32_t id = ids[rank];
    priority_[id] = static_cast<int32_t>(rank);
    int32_t node = 0;
    for (char ch : vocab.tokens[id].text) {
      const auto b = static_cast<uint8_t>(ch);
      int32_t next = node == 0 ? root_children_[b] : child(node, b);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_.push_back(Node{});
        if (node == 0) {
          root_children_[b] = next;
        } else {
          nodes_[node].children.emplace_back(b, next);
        }
      }
      node = next;
    }
    nodes_[node].token = id;
  }
}

std::vector<Fragment> SpecialMatcher::partition(const Vocab& vocab, std::string_view text,
                                                bool parse_special) const {
  std::vector<Fragment> out;
  if (text.empty()) return out;

  // 1. Every place a special token's text occurs.
  std::vector<Candidate> candidates;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    int32_t node = root_children_[static_cast<uint8_t>(text[pos])];
    for (size_t len = 1; node >= 0; ++len) {
      const int32_t id = nodes_[node].token;
      if (id != kNoToken && (parse_special || !(vocab.tokens[id].attr & (kAttrControl | kAttrUnknown)))) {
        candidates.push_back({priority_[id], pos, len, id});
      }
      if (pos + len >= text.size()) break;
      node = child(node, static_cast<uint8_t>(text[pos + len]));
    }
  }
  if (candidates.empty()) {
    out.push_back({0, text.size(), kNoToken});
    return out;
  }

  // 2. Token by token in priority order, leftmost first, claim occurrences that overlap nothing claimed so far:
  //    exactly the fragments llama.cpp's repeated splitting leaves.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.pos < b.pos;
  });
  std::map<size_t, std::pair<size_t, int32_t>> claimed;  // start -> (end, token or kStripped)
  for (const Candidate& c : candidates) {
    const size_t end = c.pos + c.len;
    auto next = claimed.lower_bound(c.pos);
    if (next != claimed.end() && next->first < end) continue;
    size_t gap_begin = 0;
    if (next != claimed.begin()) {
      auto prev = std::prev(next);
      if (prev->second.first > c.pos) continue;
      gap_begin = prev->second.first;
    }
    const size_t gap_end = next == claimed.end() ? text.size() : next->first;
    claimed.emplace(c.pos, std::make_pair(end, c.token));
    const uint32_t attr = vocab.tokens[c.token].attr;
    if (attr & kAttrLstrip) {
      size_t ws = c.pos;
      while (ws > gap_begin && is_c_space(text[ws - 1])) --ws;
      if (ws < c.pos) claimed.emplace(ws, std::make_pair(c.pos, kStripped));
    }
    if (attr & kAttrRstrip) {
      size_t ws = end;
      while (ws < gap_end && is_c_space(text[ws])) ++ws;
      if (ws > end) claimed.emplace(end, std::make_pair(ws, kStripped));
    }
  }

  // 3. Raw text between the claimed intervals.
  size_t pos = 0;
  for (const auto& [start, interval] : claimed) {
    if (start > pos) out.push_back({pos, start - pos, kNoToken});
    if (interval.second != kStripped) out.push_back({start, interval.first - start, interval.second});
    pos = interval.first;
  }
  if (pos < text.size()) out.push_back({pos, text.size() - pos, kNoToken});
  return out;
}

}  // namespace kairo::tokenizer
