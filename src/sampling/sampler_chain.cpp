#include "sampling/sampler_chain.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <random>
#include <string_view>

#include "core/format.h"

namespace kairo::sampling {

Status validate_config(const SamplingConfig& c, int32_t n_vocab) {
  if (!std::isfinite(c.temperature) || c.temperature < 0.0f) {
    return Error{strprintf("temperature must be a finite number >= 0 (0 = greedy), got %g", c.temperature)};
  }
  if (c.top_k < 0) return Error{strprintf("top_k must be >= 0 (0 = off), got %d", c.top_k)};
  if (!(c.top_p >= 0.0f && c.top_p <= 1.0f)) {
    return Error{strprintf("top_p must be in [0, 1] (1 = off), got %g", c.top_p)};
  }
  if (!(c.min_p >= 0.0f && c.min_p <= 1.0f)) {
    return Error{strprintf("min_p must be in [0, 1] (0 = off), got %g", c.min_p)};
  }
  if (!std::isfinite(c.repetition_penalty) || c.repetition_penalty <= 0.0f) {
    return Error{strprintf("repetition_penalty must be a finite number > 0 (1 = off), got %g", c.repetition_penalty)};
  }
  if (!std::isfinite(c.presence_penalty)) return Error{"presence_penalty must be a finite number (0 = off)"};
  if (!std::isfinite(c.frequency_penalty)) return Error{"frequency_penalty must be a finite number (0 = off)"};
  if (c.penalty_last_n < -1) {
    return Error{strprintf("penalty_last_n must be >= -1 (-1 = all tokens, 0 = off), got %d", c.penalty_last_n)};
  }
  for (const auto& [token, bias] : c.logit_bias) {
    if (token < 0 || token >= n_vocab) {
      return Error{strprintf("logit_bias names token %d, but token ids run from 0 to %d", token, n_vocab - 1)};
    }
    if (std::isnan(bias)) return Error{strprintf("logit_bias for token %d is not a number", token)};
  }
  return Status::success();
}

SamplerChain SamplerChain::from_config(const SamplingConfig& c) {
  SamplerChain chain;
  chain.seed_ = c.seed == kRandomSeed ? (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}() : c.seed;
  if (!c.logit_bias.empty()) chain.add(make_logit_bias(c.logit_bias));
  if (c.penalty_last_n != 0 &&
      (c.repetition_penalty != 1.0f || c.presence_penalty != 0.0f || c.frequency_penalty != 0.0f)) {
    chain.add(make_penalties(c.penalty_last_n, c.repetition_penalty, c.frequency_penalty, c.presence_penalty));
  }
  if (!(c.temperature > 0.0f)) {
    chain.add(make_greedy());
    return chain;
  }
  if (c.top_k > 0) chain.add(make_top_k(c.top_k));
  if (c.top_p < 1.0f) chain.add(make_top_p(c.top_p));
  if (c.min_p > 0.0f) chain.add(make_min_p(c.min_p));
  if (c.temperature != 1.0f) chain.add(make_temperature(c.temperature));
  chain.add(make_dist(chain.seed_));
  return chain;
}

SamplerChain SamplerChain::draft_filters(const SamplingConfig& c) {
  SamplingConfig f = c;
  f.penalty_last_n = 0;
  f.seed = 0;  // the selector it would make is dropped: no seed to draw
  SamplerChain chain = from_config(f);
  if (chain.size() > 0 && chain.samplers_.back()->selects()) chain.samplers_.pop_back();
  return chain;
}

SparseDistribution SamplerChain::distribution(const float* logits, int32_t n_vocab) {
  cands_.reset_from_logits(logits, n_vocab);
  SparseDistribution out;
  for (auto& s : samplers_) {
    if (s->selects()) {
      if (std::string_view(s->name()) == "greedy") {
        const int32_t i = cands_.argmax_index();
        if (i >= 0) {
          out.ids = {cands_.data[static_cast<size_t>(i)].id};
          out.p = {1.0f};
        }
        return out;
      }
      break;
    }
    s->apply(cands_);
  }
  cands_.softmax();
  std::vector<std::pair<int32_t, float>> kept;
  kept.reserve(cands_.data.size());
  for (const TokenData& t : cands_.data) {
    if (t.p > 0.0f) kept.emplace_back(t.id, t.p);
  }
  if (!std::is_sorted(kept.begin(), kept.end())) std::sort(kept.begin(), kept.end());  // by id (ids are unique)
  out.ids.reserve(kept.size());
  out.p.reserve(kept.size());
  for (const auto& [id, p] : kept) {
    out.ids.push_back(id);
    out.p.push_back(p);
  }
  return out;
}

void SamplerChain::apply(Candidates& cands) {
  for (auto& s : samplers_) s->apply(cands);
}

int32_t SamplerChain::sample(const float* logits, int32_t n_vocab) {
  cands_.reset_from_logits(logits, n_vocab);
  apply(cands_);
  assert(cands_.selected >= 0 && "sampler chain must end with a selector (dist or greedy)");
  if (cands_.selected < 0) cands_.selected = cands_.argmax_index();
  return cands_.selected < 0 ? -1 : cands_.data[static_cast<size_t>(cands_.selected)].id;
}

void SamplerChain::accept(int32_t token) {
  for (auto& s : samplers_) s->accept(token);
}

void SamplerChain::reset() {
  for (auto& s : samplers_) s->reset();
}

}  // namespace kairo::sampling
