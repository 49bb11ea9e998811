// Final samplers: pick one candidate.
#include <random>

#include "sampling/sampler.h"

namespace kairo::sampling {

namespace {

class Dist final : public Sampler {
 public:
  explicit Dist(uint64_t seed) : seed_(seed), rng_(seed) {}
  const char* name() const override { return "dist"; }
  bool selects() const override { return true; }
  void reset() override { rng_.seed(seed_); }

  void apply(Candidates& cands) override {
    cands.selected = -1;
    if (cands.data.empty()) return;
    cands.softmax();
    // 53 random bits -> a double in [0, 1); identical on every standard library, unlike uniform_real_distribution.
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    double total = 0.0;
    for (const auto& t : cands.data) total += t.p;
    const double target = u * total;
    double cum = 0.0;
    int32_t last_positive = -1;
    for (size_t i = 0; i < cands.data.size(); ++i) {
      if (cands.data[i].p <= 0.0f) continue;
      cum += cands.data[i].p;
      last_positive = static_cast<int32_t>(i);
      if (target < cum) {
        cands.selected = last_positive;
        return;
      }
    }
    cands.selected = last_positive;  // rounding left target == total
  }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
};

class Greedy final : public Sampler {
 public:
  const char* name() const override { return "greedy"; }
  bool selects() const override { return true; }
  void apply(Candidates& cands) override { cands.selected = cands.argmax_index(); }
};

}  // namespace

std::unique_ptr<Sampler> make_dist(uint64_t seed) { return std::make_unique<Dist>(seed); }
std::unique_ptr<Sampler> make_greedy() { return std::make_unique<Greedy>(); }

}  // namespace kairo::sampling
