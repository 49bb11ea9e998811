#include "grammar/stack_arena.h"

#include <algorithm>

namespace kairo::grammar {

void sort_unique(StackSet& s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
}

StackArena::StackArena(ByteGrammar grammar) : grammar_(std::move(grammar)) {
  nodes_.push_back(Node{0, kAccepted});  // kAccepted
  nodes_.push_back(Node{0, kContext});   // kContext
}

StackId StackArena::intern(uint32_t pos, StackId parent) {
  const uint64_t key = (uint64_t{pos} << 32) | parent;
  auto [it, inserted] = index_.try_emplace(key, static_cast<StackId>(nodes_.size()));
  if (inserted) nodes_.push_back(Node{pos, parent});
  return it->second;
}

void StackArena::expand(uint32_t pos, StackId parent, StackSet& out) {
  work_.clear();
  seen_.clear();
  work_.emplace_back(pos, parent);
  while (!work_.empty()) {
    const auto [p, par] = work_.back();
    work_.pop_back();
    const uint64_t key = (uint64_t{p} << 32) | par;
    // Nullable repetition can lead back to an item already expanded in this call: expand it once.
    if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) continue;
    seen_.push_back(key);
    const Element& e = grammar_.elements[p];
    switch (e.kind) {
      case Element::Kind::kBytes:
        out.push_back(intern(p, par));
        break;
      case Element::Kind::kEnd:
        if (par == kAccepted || par == kContext) {
          out.push_back(par);
        } else {
          work_.emplace_back(nodes_[par].pos, nodes_[par].parent);
        }
        break;
      case Element::Kind::kRule: {
        // A reference that ends its alternative returns straight to the caller's frame (a tail call).
        const StackId frame = grammar_.elements[p + 1].kind == Element::Kind::kEnd ? par : intern(p + 1, par);
        for (uint32_t start : grammar_.rules[e.index].alternative_starts) work_.emplace_back(start, frame);
        break;
      }
    }
  }
}

StackSet StackArena::initial() {
  StackSet out;
  for (uint32_t start : grammar_.rules[grammar_.root].alternative_starts) {
    StackSet part;
    expand(start, kAccepted, part);
    out.insert(out.end(), part.begin(), part.end());
  }
  sort_unique(out);
  return out;
}

const StackId* StackArena::advance_one(StackId id, uint8_t byte, size_t& count) {
  count = 0;
  if (id == kAccepted || id == kContext) return nullptr;
  const Node& n = nodes_[id];
  const Element& e = grammar_.elements[n.pos];
  if (!byte_set_has(grammar_.byte_sets[e.index], byte)) return nullptr;
  const uint64_t key = (uint64_t{id} << 8) | byte;
  auto it = transitions_.find(key);
  if (it == transitions_.end()) {
    StackSet next;
    expand(n.pos + 1, n.parent, next);
    sort_unique(next);
    Span span{static_cast<uint32_t>(transition_pool_.size()), static_cast<uint32_t>(next.size())};
    transition_pool_.insert(transition_pool_.end(), next.begin(), next.end());
    it = transitions_.emplace(key, span).first;
  }
  count = it->second.count;
  return transition_pool_.data() + it->second.offset;
}

void StackArena::advance(const StackSet& from, uint8_t byte, StackSet& to) {
  to.clear();
  for (StackId id : from) {
    size_t count = 0;
    const StackId* next = advance_one(id, byte, count);
    to.insert(to.end(), next, next + count);
  }
  if (from.size() > 1) sort_unique(to);
}

StackId StackArena::truncate(StackId id, int depth, StackId& rest) {
  uint32_t frames[64];
  depth = std::min(depth, 64);
  int n = 0;
  StackId cur = id;
  while (n < depth && cur != kAccepted && cur != kContext) {
    frames[n++] = nodes_[cur].pos;
    cur = nodes_[cur].parent;
  }
  rest = cur;
  if (cur == kAccepted || cur == kContext) return id;
  StackId t = kContext;
  for (int i = n - 1; i >= 0; --i) t = intern(frames[i], t);
  return t;
}

void StackArena::expand_stack(StackId id, StackSet& out) {
  if (id == kAccepted || id == kContext) {
    out.push_back(id);
    return;
  }
  expand(nodes_[id].pos, nodes_[id].parent, out);
}

}  // namespace kairo::grammar
