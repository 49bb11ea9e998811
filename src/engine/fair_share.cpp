#include "engine/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kairo::engine {

std::vector<int> split_fairly(const std::vector<int>& demands, const std::vector<double>& weights, int budget) {
  const size_t n = demands.size();
  std::vector<double> share(n, 0.0);
  std::vector<bool> settled(n, false);
  int64_t total_demand = 0;
  for (size_t i = 0; i < n; ++i) {
    total_demand += std::max(demands[i], 0);
    if (demands[i] <= 0) settled[i] = true;
  }
  const int target = static_cast<int>(std::min<int64_t>(std::max(budget, 0), total_demand));
  // Water-filling: give every unsettled tenant weight × level; whoever needs less than that is settled at its demand
  // and the rest is spread again, until no one else settles.
  double left = target;
  for (bool changed = true; changed;) {
    changed = false;
    double w = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!settled[i]) w += weights[i];
    }
    if (w <= 0) break;
    const double level = left / w;
    for (size_t i = 0; i < n; ++i) {
      if (!settled[i] && demands[i] <= weights[i] * level) {
        share[i] = demands[i];
        left -= demands[i];
        settled[i] = true;
        changed = true;
      }
    }
    if (!changed) {
      for (size_t i = 0; i < n; ++i) {
        if (!settled[i]) share[i] = weights[i] * level;
      }
    }
  }
  // Whole tokens: floors, then the remainder to the largest fractions (earlier first on ties), never past a demand.
  std::vector<int> out(n, 0);
  int given = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::min(demands[i], static_cast<int>(std::floor(share[i] + 1e-9)));
    out[i] = std::max(out[i], 0);
    given += out[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return share[a] - out[a] > share[b] - out[b];
  });
  for (size_t k = 0; given < target && k < n; ++k) {
    const size_t i = order[k];
    if (out[i] < demands[i]) {
      ++out[i];
      ++given;
    }
  }
  // Rounding can leave a token when every fraction was used up by a capped entry: any open demand takes it.
  for (size_t i = 0; given < target && i < n; ++i) {
    const int add = std::min(demands[i] - out[i], target - given);
    out[i] += add;
    given += add;
  }
  return out;
}

void FairShare::begin_step(std::unordered_map<std::string, Tenant> tenants, int budget, int max_num_seqs,
                           int min_chunk) {
  tenants_ = std::move(tenants);
  if (tenants_.size() < 2) {
    // One tenant (or none) at work: plain order. A later fair period starts everyone level at zero.
    was_active_.clear();
    vtime_.clear();
    return;
  }
  // The virtual clock: the least virtual time among the tenants that stayed at work. A newcomer (or a tenant back
  // from idling) starts there, so it is served promptly but cannot spend service it did not wait for.
  double clock = std::numeric_limits<double>::infinity();
  for (const auto& [name, t] : tenants_) {
    if (was_active_.count(name)) clock = std::min(clock, vtime_[name]);
  }
  if (clock == std::numeric_limits<double>::infinity()) clock = 0;
  std::unordered_map<std::string, bool> now_active;
  std::vector<const std::string*> names;
  std::vector<int> demands;
  std::vector<double> weights;
  double total_weight = 0;
  for (auto& [name, t] : tenants_) {
    if (!was_active_.count(name)) vtime_[name] = std::max(vtime_[name], clock);
    now_active[name] = true;
    names.push_back(&name);
    demands.push_back(t.demand);
    weights.push_back(t.weight);
    total_weight += t.weight;
  }
  was_active_ = std::move(now_active);
  const std::vector<int> allowances = split_fairly(demands, weights, budget);
  for (size_t i = 0; i < names.size(); ++i) {
    // The step-length cap: no more than the weighted level of the largest other share, and at least min_chunk.
    double level = 0;
    for (size_t j = 0; j < names.size(); ++j) {
      if (j != i) level = std::max(level, allowances[j] * weights[i] / weights[j]);
    }
    const int cap = std::max(min_chunk, static_cast<int>(std::ceil(level - 1e-9)));
    Tenant& t = tenants_.at(*names[i]);
    t.allowance = std::min(allowances[i], cap);
    t.seat_share = std::max(1, static_cast<int>(std::floor(max_num_seqs * t.weight / total_weight)));
  }
}

int FairShare::n_waiting_tenants() const {
  int n = 0;
  for (const auto& [name, t] : tenants_) n += t.waiting ? 1 : 0;
  return n;
}

double FairShare::finish_time(const std::string& name) const {
  const Tenant& t = tenants_.at(name);
  auto it = vtime_.find(name);
  return (it == vtime_.end() ? 0.0 : it->second) + t.used / t.weight;
}

void FairShare::charge(const std::string& name, double weight, int n_tokens) {
  vtime_[name] += n_tokens / weight;
}

}  // namespace kairo::engine
