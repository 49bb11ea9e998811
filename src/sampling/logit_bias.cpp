#include <cmath>
#include <limits>

#include "sampling/sampler.h"
#include "sampling/token_lookup.h"

namespace kairo::sampling {

namespace {

class LogitBias final : public Sampler {
 public:
  explicit LogitBias(std::vector<std::pair<int32_t, float>> bias) : bias_(std::move(bias)) {}
  const char* name() const override { return "logit-bias"; }

  void apply(Candidates& cands) override {
    if (bias_.empty()) return;
    TokenLookup lookup(cands);
    for (const auto& [token, bias] : bias_) {
      TokenData* t = lookup.find(token);
      if (t == nullptr) continue;
      t->logit += bias;
      // +inf logit with a -inf bias: the explicit ban wins.
      if (std::isnan(t->logit)) t->logit = -std::numeric_limits<float>::infinity();
    }
    cands.sorted = false;
  }

 private:
  std::vector<std::pair<int32_t, float>> bias_;
};

}  // namespace

std::unique_ptr<Sampler> make_logit_bias(std::vector<std::pair<int32_t, float>> bias) {
  return std::make_unique<LogitBias>(std::move(bias));
}

}  // namespace kairo::sampling
