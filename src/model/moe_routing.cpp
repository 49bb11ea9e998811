#include "model/moe_routing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace kairo::model {

void route_tokens(const float* logits, int64_t n_tokens, int n_experts, int n_used, Routing& out) {
  assert(n_used >= 1 && n_used <= n_experts);
  const auto n_pairs = static_cast<size_t>(n_tokens * n_used);
  std::vector<int> chosen(n_pairs);    // token t's experts: [t * n_used, (t + 1) * n_used)
  std::vector<float> chosen_w(n_pairs);
  std::vector<int64_t> count(static_cast<size_t>(n_experts), 0);
  std::vector<double> prob(static_cast<size_t>(n_experts));
  std::vector<int> order(static_cast<size_t>(n_experts));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* row = logits + t * n_experts;
    const float max = *std::max_element(row, row + n_experts);
    double sum = 0;
    for (int e = 0; e < n_experts; ++e) sum += prob[static_cast<size_t>(e)] = std::exp(double(row[e]) - max);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + n_used, order.end(), [&](int a, int b) {
      return prob[static_cast<size_t>(a)] > prob[static_cast<size_t>(b)] ||
             (prob[static_cast<size_t>(a)] == prob[static_cast<size_t>(b)] && a < b);
    });
    double kept = 0;
    for (int k = 0; k < n_used; ++k) kept += prob[static_cast<size_t>(order[static_cast<size_t>(k)])] / sum;
    for (int k = 0; k < n_used; ++k) {
      const int e = order[static_cast<size_t>(k)];
      const auto pair = static_cast<size_t>(t * n_used + k);
      chosen[pair] = e;
      chosen_w[pair] = static_cast<float>(prob[static_cast<size_t>(e)] / sum / kept);
      ++count[static_cast<size_t>(e)];
    }
  }
  // Packed expert after expert; within an expert, tokens in step order.
  out.experts.clear();
  out.offsets.assign(1, 0);
  std::vector<int64_t> next(static_cast<size_t>(n_experts), 0);
  for (int e = 0; e < n_experts; ++e) {
    if (count[static_cast<size_t>(e)] == 0) continue;
    next[static_cast<size_t>(e)] = out.offsets.back();
    out.experts.push_back(e);
    out.offsets.push_back(out.offsets.back() + count[static_cast<size_t>(e)]);
  }
  out.rows.resize(n_pairs);
  out.weights.resize(n_pairs);
  for (size_t pair = 0; pair < n_pairs; ++pair) {
    const int64_t at = next[static_cast<size_t>(chosen[pair])]++;
    out.rows[static_cast<size_t>(at)] = static_cast<int32_t>(pair / static_cast<size_t>(n_used));
    out.weights[static_cast<size_t>(at)] = chosen_w[pair];
  }
}

}  // namespace kairo::model
