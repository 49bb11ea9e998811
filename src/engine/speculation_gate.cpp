#include "engine/speculation_gate.h"

#include <bit>

namespace kairo::engine {

namespace {
constexpr double kWeight = 0.2;  // of a new observation in the moving averages
}

int SpeculationGate::bucket(int n_tokens) {
  return n_tokens <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<uint32_t>(n_tokens))) - 1;
}

void SpeculationGate::observe(Bucket& b, int n_tokens, double seconds) {
  if (b.seconds == 0) {
    b = {seconds, static_cast<double>(n_tokens)};
    return;
  }
  b.seconds = (1 - kWeight) * b.seconds + kWeight * seconds;
  b.n_tokens = (1 - kWeight) * b.n_tokens + kWeight * n_tokens;
}

void SpeculationGate::observe_step(int n_tokens, double seconds, bool decode_only) {
  if (n_tokens <= 0 || seconds <= 0) return;
  if (decode_only) observe(decode_[bucket(n_tokens)], n_tokens, seconds);
  observe(any_[bucket(n_tokens)], n_tokens, seconds);
}

void SpeculationGate::observe_verification(int n_proposed, int n_accepted) {
  if (n_proposed <= 0) return;
  acceptance_ = (1 - kWeight) * acceptance_ + kWeight * static_cast<double>(n_accepted) / n_proposed;
}

double SpeculationGate::estimated_seconds(int n_tokens) const {
  const int b = bucket(n_tokens);
  if (decode_[b].seconds > 0) return decode_[b].seconds;
  const Bucket* below = nullptr;
  for (int i = b - 1; i >= 0 && !below; --i) {
    if (decode_[i].seconds > 0) below = &decode_[i];
  }
  const Bucket* above = nullptr;
  for (int i = b + 1; i < static_cast<int>(any_.size()) && !above; ++i) {
    if (any_[i].seconds > 0) above = &any_[i];
  }
  if (!below || !above || above->n_tokens <= below->n_tokens) return 0;
  const double t = (n_tokens - below->n_tokens) / (above->n_tokens - below->n_tokens);
  return below->seconds + t * (above->seconds - below->seconds);
}

bool SpeculationGate::worth_it(int n_decode, int n_proposed) {
  if (n_decode <= 0 || n_proposed <= 0) return false;
  const double plain = step_seconds(n_decode);
  if (plain == 0) return false;  // measure the plain step first
  const double verifying = estimated_seconds(n_decode + n_proposed);
  if (verifying == 0 || ++n_declined_ >= kExploreEvery) {
    n_declined_ = 0;
    return true;
  }
  const bool pays = (n_decode + acceptance_ * n_proposed) / verifying > n_decode / plain;
  if (pays) n_declined_ = 0;
  return pays;
}

}  // namespace kairo::engine
