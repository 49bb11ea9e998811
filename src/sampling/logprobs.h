#pragma once
// Log-probabilities for the API's `logprobs` fields. These are computed from the RAW logits row (the model's
// own distribution, before bias, penalties, temperature and top-k/p filters), as vLLM returns by default. The
// processed distribution is degenerate for what users ask logprobs for: greedy and top-k leave -inf for every
// token outside the kept set. (OpenAI reports the processed one; callers wanting that can pass processed
// logits.) NaN logits count as -inf, like in sampling.
#include <cstdint>
#include <vector>

namespace kairo::sampling {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

// out[i] = logits[i] - logsumexp(logits). Resizes out to n_vocab.
void log_softmax(const float* logits, int32_t n_vocab, std::vector<float>& out);
// The k most likely tokens, most likely first, ties to the lower id. k is clamped to [0, n_vocab].
std::vector<TokenLogprob> top_logprobs(const float* logits, int32_t n_vocab, int32_t k);
// log p(token); -inf for an id outside [0, n_vocab).
float token_logprob(const float* logits, int32_t n_vocab, int32_t token);

}  // namespace kairo::sampling
