#include <deque>
#include <unordered_map>

#include "sampling/sampler.h"
#include "sampling/token_lookup.h"

namespace kairo::sampling {

namespace {

class Penalties final : public Sampler {
 public:
  Penalties(int32_t last_n, float repetition, float frequency, float presence)
      : last_n_(last_n), repetition_(repetition), frequency_(frequency), presence_(presence) {}
  const char* name() const override { return "penalties"; }

  void accept(int32_t token) override {
    if (last_n_ == 0) return;
    window_.push_back(token);
    ++counts_[token];
    if (last_n_ > 0 && window_.size() > static_cast<size_t>(last_n_)) {
      const int32_t old = window_.front();
      window_.pop_front();
      if (--counts_[old] == 0) counts_.erase(old);
    }
  }

  void reset() override {
    window_.clear();
    counts_.clear();
  }

  void apply(Candidates& cands) override {
    if (last_n_ == 0 || (repetition_ == 1.0f && frequency_ == 0.0f && presence_ == 0.0f)) return;
    TokenLookup lookup(cands);
    // Iterate the (small) window's distinct tokens rather than the whole vocabulary.
    for (const auto& [token, count] : counts_) {
      TokenData* t = lookup.find(token);
      if (t == nullptr) continue;
      if (t->logit <= 0.0f) {
        t->logit *= repetition_;
      } else {
        t->logit /= repetition_;
      }
      t->logit -= static_cast<float>(count) * frequency_ + presence_;
    }
    cands.sorted = false;
  }

 private:
  int32_t last_n_;
  float repetition_, frequency_, presence_;
  std::deque<int32_t> window_;
  std::unordered_map<int32_t, int32_t> counts_;
};

}  // namespace

std::unique_ptr<Sampler> make_penalties(int32_t last_n, float repetition, float frequency, float presence) {
  return std::make_unique<Penalties>(last_n, repetition, frequency, presence);
}

}  // namespace kairo::sampling
