// Samplers that narrow or reshape the distribution: top-k, top-p, min-p, temperature.
#include <algorithm>
#include <cmath>

#include "sampling/sampler.h"

namespace kairo::sampling {

namespace {

class TopK final : public Sampler {
 public:
  explicit TopK(int32_t k) : k_(k) {}
  const char* name() const override { return "top-k"; }
  void apply(Candidates& cands) override {
    if (k_ <= 0) return;
    cands.keep_top(static_cast<size_t>(k_));
  }

 private:
  int32_t k_;
};

class TopP final : public Sampler {
  static constexpr size_t kFirstChunk = 256;

 public:
  TopP(float p, size_t min_keep) : p_(p), min_keep_(std::max<size_t>(min_keep, 1)) {}
  const char* name() const override { return "top-p"; }
  void apply(Candidates& cands) override {
    if (p_ >= 1.0f || cands.data.empty()) return;
    cands.softmax();
    // The nucleus is usually a tiny part of a 100k+ vocabulary: sort only a growing head instead of everything
    // (a full sort costs ~14 ms per token at 152k). Each round selects the next chunk in O(n) and sorts it.
    auto& d = cands.data;
    const size_t n = d.size();
    size_t n_sorted = cands.sorted ? n : 0;
    size_t want = std::min(n, kFirstChunk);
    double cum = 0.0;
    for (size_t i = 0;; ++i) {
      if (i == n_sorted) {
        if (n_sorted == n) break;
        const auto first = d.begin() + static_cast<std::ptrdiff_t>(n_sorted);
        const auto mid = d.begin() + static_cast<std::ptrdiff_t>(want);
        std::nth_element(first, mid, d.end(), precedes);
        std::sort(first, mid, precedes);
        n_sorted = want;
        want = std::min(n, want * 4);
      }
      cum += d[i].p;
      if (cum >= p_ && i + 1 >= min_keep_) {
        d.resize(i + 1);
        break;
      }
    }
    cands.sorted = true;
  }

 private:
  float p_;
  size_t min_keep_;
};

class MinP final : public Sampler {
 public:
  MinP(float min_p, size_t min_keep) : min_p_(min_p), min_keep_(std::max<size_t>(min_keep, 1)) {}
  const char* name() const override { return "min-p"; }
  void apply(Candidates& cands) override {
    if (min_p_ <= 0.0f || cands.data.empty()) return;
    float max_logit = cands.data[0].logit;
    for (const auto& t : cands.data) max_logit = std::max(max_logit, t.logit);
    // p_i >= min_p * p_max  <=>  logit_i >= max_logit + log(min_p): no softmax needed.
    const float threshold = max_logit + std::log(min_p_);
    size_t n_kept = 0;
    for (const auto& t : cands.data) n_kept += (t.logit >= threshold);
    if (n_kept < min_keep_) {
      cands.keep_top(min_keep_);
      return;
    }
    // Order-preserving, so a sorted set stays sorted.
    std::erase_if(cands.data, [threshold](const TokenData& t) { return !(t.logit >= threshold); });
  }

 private:
  float min_p_;
  size_t min_keep_;
};

class Temperature final : public Sampler {
 public:
  explicit Temperature(float t) : t_(t) {}
  const char* name() const override { return "temperature"; }
  void apply(Candidates& cands) override {
    if (t_ <= 0.0f) {
      const int32_t best = cands.argmax_index();
      if (best >= 0) cands.data = {cands.data[static_cast<size_t>(best)]};
      cands.sorted = true;
      return;
    }
    if (t_ == 1.0f) return;
    const float inv = 1.0f / t_;
    for (auto& t : cands.data) t.logit *= inv;
    cands.sorted = false;  // rounding may create new ties, which order by id
  }

 private:
  float t_;
};

}  // namespace

std::unique_ptr<Sampler> make_top_k(int32_t k) { return std::make_unique<TopK>(k); }
std::unique_ptr<Sampler> make_top_p(float p, size_t min_keep) { return std::make_unique<TopP>(p, min_keep); }
std::unique_ptr<Sampler> make_min_p(float min_p, size_t min_keep) { return std::make_unique<MinP>(min_p, min_keep); }
std::unique_ptr<Sampler> make_temperature(float t) { return std::make_unique<Temperature>(t); }

}  // namespace kairo::sampling
