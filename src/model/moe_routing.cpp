#include "model/moe_routing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace kairo::model {

void route_tokens(const float* logits, int64_t n_tokens, int n_experts, int n_used, Routing& out) {
  assert(n_used >= 1 && n_used <= n_experts);
  std::vector<ExpertTokens> by_expert(static_cast<size_t>(n_experts));
  for (int e = 0; e < n_experts; ++e) by_expert[static_cast<size_t>(e)].expert = e;
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
      ExpertTokens& slot = by_expert[static_cast<size_t>(e)];
      slot.rows.push_back(static_cast<int32_t>(t));
      slot.weights.push_back(static_cast<float>(prob[static_cast<size_t>(e)] / sum / kept));
    }
  }
  out.experts.clear();
  for (ExpertTokens& slot : by_expert) {
    if (!slot.rows.empty()) out.experts.push_back(std::move(slot));
  }
}

}  // namespace kairo::model
