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
    // One tenant (or none) at work: plain order. A later fair period starts everyone level at zero, except that the
    // tenant at work now is the incumbent then: whoever joins it is the newcomer.
    was_active_.clear();
    vtime_.clear();
    for (const auto& [name, t] : tenants_) was_active_[name] = true;
    return;
  }
  double total_weight = 0;
  for (const auto& [name, t] : tenants_) total_weight += t.weight;
  // Credit: one step's budget of a tenant's own tokens (budget / weight, in virtual time). No tenant at work trails
  // the most-served one (the lead) by more, and a newcomer (or a tenant back from idling) starts exactly that far
  // behind unless it was further ahead. So an interactive tenant's next prompts go first (the yield below), but
  // idling, or trickling along below its share, banks no more than one step of service.
  double lead = -std::numeric_limits<double>::infinity();
  for (const auto& [name, t] : tenants_) {
    if (was_active_.count(name)) lead = std::max(lead, vtime_[name]);
  }
  std::unordered_map<std::string, bool> now_active;
  std::vector<const std::string*> names;
  std::vector<int> demands;
  std::vector<double> weights;
  for (auto& [name, t] : tenants_) {
    const auto it = vtime_.find(name);
    const double v = it == vtime_.end() ? -std::numeric_limits<double>::infinity() : it->second;
    // All new at once: all level, at zero.
    vtime_[name] = std::max(v, lead == -std::numeric_limits<double>::infinity() ? 0.0 : lead - budget / t.weight);
    now_active[name] = true;
    names.push_back(&name);
    demands.push_back(t.demand);
    weights.push_back(t.weight);
  }
  was_active_ = std::move(now_active);

  const std::vector<int> allowances = split_fairly(demands, weights, budget);
  std::vector<bool> yields(names.size(), false);
  for (size_t i = 0; i < names.size(); ++i) {
    // The step-length cap: no more than the weighted level of the largest other share, and at least min_chunk.
    double level = 0;
    for (size_t j = 0; j < names.size(); ++j) {
      if (j == i) continue;
      level = std::max(level, allowances[j] * weights[i] / weights[j]);
      // The yield: tenant j's prompt tokens of this step would all finish (in virtual time) before tenant i's first
      // token starts, so fair queueing sends them first. A step cannot send them one after the other, and every token
      // in it finishes when the step does: i keeps only min_chunk tokens, and j's prompt gets a short step. Over a
      // few steps the split stays even, since j's virtual time moves ahead by what it got.
      const Tenant& tj = tenants_.at(*names[j]);
      if (tj.prompt && allowances[j] > 0 &&
          vtime_[*names[j]] + allowances[j] / weights[j] <= vtime_[*names[i]] + 1e-9) {
        yields[i] = true;
      }
    }
    const int cap = std::max(min_chunk, static_cast<int>(std::ceil(level - 1e-9)));
    Tenant& t = tenants_.at(*names[i]);
    // A yielding tenant is held to one token for now (never 0: its decodes keep rotating, Scheduler::schedule), and
    // gets up to min_chunk below from what the prompts leave.
    t.allowance = std::min(allowances[i], yields[i] ? 1 : cap);
    t.seat_share = std::max(1, static_cast<int>(std::floor(max_num_seqs * t.weight / total_weight)));
  }
  if (std::find(yields.begin(), yields.end(), true) == yields.end()) return;
  // The prompts yielded to take what the yielding tenants leave, by weight, so they finish in as few steps as the
  // budget allows (two prompts that fit a step alone fit it here too); then the yielding tenants take up to
  // min_chunk of the rest.
  int left = budget;
  std::vector<int> more(names.size(), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    const Tenant& t = tenants_.at(*names[i]);
    left -= t.allowance;
    more[i] = yields[i] ? 0 : t.demand - t.allowance;
  }
  const std::vector<int> extra = split_fairly(more, weights, left);
  for (size_t i = 0; i < names.size(); ++i) {
    Tenant& t = tenants_.at(*names[i]);
    t.allowance += extra[i];
    left -= extra[i];
  }
  for (size_t i = 0; i < names.size() && left > 0; ++i) {
    if (!yields[i]) continue;
    Tenant& t = tenants_.at(*names[i]);
    const int top = std::clamp(std::min(allowances[i], min_chunk) - t.allowance, 0, left);
    t.allowance += top;
    left -= top;
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
