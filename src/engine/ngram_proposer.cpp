#include "engine/ngram_proposer.h"

#include <algorithm>

namespace kairo::engine {

void NgramProposer::propose(std::span<const int32_t> tokens, int /*n_prompt*/, int k, std::vector<int32_t>& out) {
  out.clear();
  const int64_t len = static_cast<int64_t>(tokens.size());
  for (int n = std::min<int64_t>(config_.max_n, len - 1); n >= config_.min_n && k > 0; --n) {
    const std::span<const int32_t> suffix = tokens.subspan(static_cast<size_t>(len - n));
    // The most recent earlier occurrence: the latest text is the likeliest to be repeated next.
    for (int64_t at = len - n - 1; at >= 0; --at) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + at)) continue;
      // What followed it. A continuation that runs into the suffix goes on with the guesses themselves, so a loop
      // shorter than k is proposed for its whole length (a period-p loop repeats tokens p apart).
      const int64_t from = at + n;
      for (int i = 0; i < k; ++i) {
        const int64_t src = from + i;
        out.push_back(src < len ? tokens[static_cast<size_t>(src)] : out[static_cast<size_t>(src - len)]);
      }
      return;
    }
  }
}

}  // namespace kairo::engine
