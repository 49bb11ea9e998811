// Final samplers: pick one candidate.
#include <random>

#include "sampling/inverse_cdf.h"
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
    const double u = uniform01(rng_);
    cands.selected = static_cast<int32_t>(inverse_cdf(
        cands.data.size(), [&](size_t i) { return static_cast<double>(cands.data[i].p); }, u));
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
