#pragma once
// Whether verifying this step's proposals pays, from measurements rather than a fixed batch size. A step of n
// decode tokens emits n tokens in T(n) seconds; verifying d proposed tokens more emits about n + a * d (a: the
// recent acceptance rate) in T(n + d). While T is flat (decode reads the weights once, whatever n: memory-bound)
// any acceptance pays; once the batch is compute-bound, T grows with every token and only well-accepted proposals
// do. T is measured from the engine's own decode-only steps, per power-of-two bucket of tokens.
#include <array>
#include <cstdint>

namespace kairo::engine {

class SpeculationGate {
 public:
  // A step that only decoded (every chunk one token plus its proposals) of n_tokens took `seconds`.
  void observe_step(int n_tokens, double seconds);
  // A verification accepted n_accepted of n_proposed tokens.
  void observe_verification(int n_proposed, int n_accepted);
  // Whether n decoding requests should verify d proposed tokens in the step. A bucket never measured is measured
  // first (plain steps before speculating ones), and every kExploreEvery declines one step speculates anyway, so a
  // stale estimate of the bigger step cannot switch speculation off for good.
  bool worth_it(int n_decode, int n_proposed);

  double acceptance() const { return acceptance_; }
  // Measured seconds of a decode-only step of n tokens (0: not measured yet).
  double step_seconds(int n_tokens) const { return seconds_[bucket(n_tokens)]; }

  static constexpr int kExploreEvery = 64;

 private:
  static int bucket(int n_tokens);

  std::array<double, 32> seconds_{};  // by bucket: floor(log2(n))
  double acceptance_ = 0.5;           // before any verification: a guess that lets the first ones happen
  int n_declined_ = 0;
};

}  // namespace kairo::engine
