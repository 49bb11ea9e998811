#pragma once
// Whether verifying this step's proposals pays, from measurements rather than a fixed batch size. A step of n
// decode tokens emits n tokens in T(n) seconds; verifying d proposed tokens more emits about n + a * d (a: the
// recent acceptance rate) in T(n + d). While T is flat (decode reads the weights once, whatever n: memory-bound)
// any acceptance pays; once the batch is compute-bound, T grows with every token and only well-accepted proposals
// do. T is measured from the engine's own decode-only steps, per power-of-two bucket of tokens (a speculating
// step's time includes its proposing: a draft model's steps count against it).
//
// A verifying step size never measured is estimated between the decode step below it and a larger step measured
// above it (a prompt's chunk: any step's time per bucket is kept for this), linear in the token count: T is concave
// in n (flat, then compute-bound), so the line overestimates T and the gate errs toward declining. Without a larger
// step to estimate from, the step is tried once and measured. A blind first try at 16 sequences with a useless draft
// model cost a fifth of a 32-token generation's decode time (tinyllama Q4_0, AMD EPYC Zen 5, 2 threads).
#include <array>
#include <cstdint>

namespace kairo::engine {

class SpeculationGate {
 public:
  // A step of n_tokens took `seconds`; decode_only: every chunk was one token plus its proposals.
  void observe_step(int n_tokens, double seconds, bool decode_only = true);
  // A verification accepted n_accepted of n_proposed tokens.
  void observe_verification(int n_proposed, int n_accepted);
  // Whether n decoding requests should verify d proposed tokens in the step. A plain step never measured is
  // measured first; a verifying one is estimated (above), or tried when it cannot be; every kExploreEvery declines
  // one step speculates anyway, so a stale or estimated time of the bigger step cannot switch speculation off for
  // good.
  bool worth_it(int n_decode, int n_proposed);

  double acceptance() const { return acceptance_; }
  // Measured seconds of a decode-only step of n tokens (0: not measured yet).
  double step_seconds(int n_tokens) const { return decode_[bucket(n_tokens)].seconds; }
  // The measured decode-only time of n tokens, else the estimate from the steps around it (0: neither).
  double estimated_seconds(int n_tokens) const;

  static constexpr int kExploreEvery = 64;

 private:
  struct Bucket {
    double seconds = 0;  // moving averages of the steps that fell in the bucket
    double n_tokens = 0;
  };
  static int bucket(int n_tokens);
  static void observe(Bucket& b, int n_tokens, double seconds);

  std::array<Bucket, 32> decode_{};  // decode-only steps, by floor(log2(n))
  std::array<Bucket, 32> any_{};     // every step, prompt chunks included
  double acceptance_ = 0.5;          // before any verification: a guess that lets the first ones happen
  int n_declined_ = 0;
};

}  // namespace kairo::engine
