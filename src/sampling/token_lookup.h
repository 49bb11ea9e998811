#pragma once
// Finds a token's entry in the candidates. Right after reset_from_logits data[i].id == i, so the common case is a
// direct index; after a reordering sampler it falls back to a map built once per apply().
#include <cstdint>
#include <unordered_map>

#include "sampling/candidates.h"

namespace kairo::sampling {

class TokenLookup {
 public:
  explicit TokenLookup(Candidates& cands) : cands_(cands) {}

  TokenData* find(int32_t token) {
    auto& data = cands_.data;
    if (token >= 0 && static_cast<size_t>(token) < data.size() && data[token].id == token) return &data[token];
    if (!built_) {
      for (size_t i = 0; i < data.size(); ++i) index_.emplace(data[i].id, i);
      built_ = true;
    }
    auto it = index_.find(token);
    return it == index_.end() ? nullptr : &data[it->second];
  }

 private:
  Candidates& cands_;
  bool built_ = false;
  std::unordered_map<int32_t, size_t> index_;
};

}  // namespace kairo::sampling
