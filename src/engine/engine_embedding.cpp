// Embedding requests (Request::embedding): their prompt is computed like any other, chunk by chunk in the continuous
// batch; the final hidden states they pool are summed in position order, so the vector does not depend on how the
// prompt was chunked or what ran beside it.
#include <cmath>

#include "engine/engine.h"

namespace kairo::engine {

size_t Engine::pool_embedding(Sequence& seq, const ScheduledChunk& chunk, size_t first_row) {
  const int dim = model_.config().dim;
  const auto [first, last] = ModelRunner::embedding_positions(chunk);
  if (seq.pooled.empty()) seq.pooled.assign(static_cast<size_t>(dim), 0.0);
  for (int p = first; p < last; ++p) {
    const float* h = runner_.hidden_row(first_row + static_cast<size_t>(p - first));
    for (int i = 0; i < dim; ++i) seq.pooled[static_cast<size_t>(i)] += h[i];
  }
  seq.n_pooled = std::max(seq.n_pooled, last);
  if (chunk.needs_sample) {  // the prompt is complete
    RequestOutput out;
    out.embedding.resize(static_cast<size_t>(dim));
    const double scale = seq.request.embedding == EmbeddingPooling::Mean ? 1.0 / seq.n_prompt : 1.0;
    double norm2 = 0;
    for (int i = 0; i < dim; ++i) {
      const double v = seq.pooled[static_cast<size_t>(i)] * scale;
      norm2 += v * v;
    }
    const double inv_norm = seq.request.normalize_embedding && norm2 > 0 ? 1.0 / std::sqrt(norm2) : 1.0;
    for (int i = 0; i < dim; ++i)
      out.embedding[static_cast<size_t>(i)] = static_cast<float>(seq.pooled[static_cast<size_t>(i)] * scale * inv_norm);
    if (seq.first_token == Clock::time_point{}) seq.first_token = Clock::now();
    finish(seq, FinishReason::Stop, out);
  }
  return static_cast<size_t>(last - first);
}

}  // namespace kairo::engine
