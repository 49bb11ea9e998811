#include "engine/speculation_gate.h"

#include <bit>

namespace kairo::engine {

namespace {
constexpr double kWeight = 0.2;  // of a new observation in the moving averages
}

int SpeculationGate::bucket(int n_tokens) {
  return n_tokens <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<uint32_t>(n_tokens))) - 1;
}

void SpeculationGate::observe_step(int n_tokens, double seconds) {
  if (n_tokens <= 0 || seconds <= 0) return;
  double& s = seconds_[bucket(n_tokens)];
  s = s == 0 ? seconds : (1 - kWeight) * s + kWeight * seconds;
}

void SpeculationGate::observe_verification(int n_proposed, int n_accepted) {
  if (n_proposed <= 0) return;
  acceptance_ = (1 - kWeight) * acceptance_ + kWeight * static_cast<double>(n_accepted) / n_proposed;
}

bool SpeculationGate::worth_it(int n_decode, int n_proposed) {
  if (n_decode <= 0 || n_proposed <= 0) return false;
  const double plain = step_seconds(n_decode);
  if (plain == 0) return false;  // measure the plain step first
  const double verifying = step_seconds(n_decode + n_proposed);
  if (verifying == 0 || ++n_declined_ >= kExploreEvery) {
    n_declined_ = 0;
    return true;
  }
  const bool pays = (n_decode + acceptance_ * n_proposed) / verifying > n_decode / plain;
  if (pays) n_declined_ = 0;
  return pays;
}

}  // namespace kairo::engine
