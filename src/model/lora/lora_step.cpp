#include "model/lora/lora_step.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace kairo::model::lora {
namespace {

constexpr uint64_t kF32 = sizeof(float);

}  // namespace

Status LoraScratch::reserve(kernels::Device& dev, const ModelConfig& c, int64_t n_tokens, int max_rank) {
  if (n_tokens <= token_capacity && max_rank <= rank_capacity) return Status::success();
  release(dev);
  const int64_t widest = std::max<int64_t>({c.dim, c.q_dim(), c.kv_dim(), c.ffn_dim});
  auto grow = [&](kernels::DeviceSpan& span, int64_t n_floats, const char* what) -> Status {
    KAIRO_TRY_ASSIGN(span, dev.allocate(static_cast<uint64_t>(std::max<int64_t>(n_floats, 1)) * kF32, what));
    return Status::success();
  };
  KAIRO_TRY_STATUS(grow(in, n_tokens * widest, "the LoRA inputs (lower --max-num-batched-tokens)"));
  KAIRO_TRY_STATUS(grow(h, 3 * n_tokens * max_rank, "the LoRA shrinks (lower --max-num-batched-tokens)"));
  KAIRO_TRY_STATUS(grow(d, n_tokens * widest, "the LoRA expands (lower --max-num-batched-tokens)"));
  token_capacity = n_tokens;
  rank_capacity = max_rank;
  return Status::success();
}

void LoraScratch::release(kernels::Device& dev) {
  for (kernels::DeviceSpan* s : {&in, &h, &d}) {
    if (!s->empty()) dev.free(*s);
    *s = {};
  }
  token_capacity = 0;
  rank_capacity = 0;
}

bool valid_adapter_indices(const LoraSet* set, const std::vector<int32_t>& adapter_idx) {
  const int n = set ? set->size() : 0;
  return std::all_of(adapter_idx.begin(), adapter_idx.end(), [n](int32_t a) { return a >= 0 && a <= n; });
}

LoraStep::LoraStep(const LoraSet* set, const std::vector<int32_t>& adapter_idx, const ModelConfig& c,
                   kernels::Device& dev, LoraScratch& scratch)
    : set_(set), dev_(&dev), scratch_(&scratch), n_tokens_(static_cast<int64_t>(adapter_idx.size())) {
  if (set == nullptr || set->empty()) return;
  assert(valid_adapter_indices(set, adapter_idx));
  // Counting sort by adapter: groups in adapter order, each group's tokens ascending.
  std::vector<int64_t> count(static_cast<size_t>(set->size()) + 1, 0);
  for (int32_t a : adapter_idx) ++count[static_cast<size_t>(a)];
  scratch.offsets.assign(1, 0);
  scratch.adapters.clear();
  for (int a = 1; a <= set->size(); ++a) {
    if (count[static_cast<size_t>(a)] == 0) continue;
    scratch.adapters.push_back(a);
    scratch.offsets.push_back(scratch.offsets.back() + count[static_cast<size_t>(a)]);
  }
  if (scratch.adapters.empty()) return;
  scratch.rows.resize(static_cast<size_t>(scratch.offsets.back()));
  std::vector<int64_t> next(count.size(), -1);
  for (size_t g = 0; g < scratch.adapters.size(); ++g)
    next[static_cast<size_t>(scratch.adapters[g])] = scratch.offsets[g];
  for (int64_t t = 0; t < n_tokens_; ++t) {
    const auto a = static_cast<size_t>(adapter_idx[static_cast<size_t>(t)]);
    if (a != 0) scratch.rows[static_cast<size_t>(next[a]++)] = static_cast<int32_t>(t);
  }
  scratch.ones.assign(static_cast<size_t>(n_tokens_), 1.0f);
  if (Status st = scratch.reserve(dev, c, n_tokens_, set->max_rank()); !st)
    throw std::runtime_error(st.error().message);
  rows_ = dev.stage(scratch.rows.data(), scratch.rows.size() * sizeof(int32_t));
  ones_ = dev.stage(scratch.ones.data(), scratch.ones.size() * kF32);
  active_ = true;
}

void LoraStep::apply(int layer, const LoraTarget* targets, int n_targets, kernels::DeviceSpan x, int64_t n_in,
                     const kernels::DeviceSpan* ys, kernels::Numerics numerics) const {
  if (!active_) return;
  assert(n_targets >= 1 && n_targets <= 3);
  LoraScratch& s = *scratch_;
  const size_t n_groups = s.adapters.size();
  s.pairs.assign(n_groups * static_cast<size_t>(n_targets), {});
  bool any = false;
  for (size_t g = 0; g < n_groups; ++g) {
    const auto& pairs = set_->at(s.adapters[g]).layers[static_cast<size_t>(layer)];
    for (int i = 0; i < n_targets; ++i) {
      const auto& pair = pairs[static_cast<size_t>(targets[i])];
      if (!pair) continue;
      s.pairs[g * static_cast<size_t>(n_targets) + static_cast<size_t>(i)] = {&pair->a, &pair->b, pair->scale};
      any = true;
    }
  }
  if (!any) return;
  kernels::DeviceLoraDeltas job;
  job.x = x;
  job.n_in = n_in;
  job.n_groups = static_cast<int>(n_groups);
  job.offsets = s.offsets.data();
  job.rows = rows_;
  job.n_targets = n_targets;
  job.pairs = s.pairs.data();
  job.ys = ys;
  job.max_rank = set_->max_rank();
  job.numerics = numerics;
  job.h = s.h;
  job.gather = s.in;
  job.expand = s.d;
  job.ones = ones_;
  dev_->add_lora_deltas(job);
}

}  // namespace kairo::model::lora
