#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "core/check.h"

namespace kairo::engine {

Scheduler::Scheduler(SchedulerConfig config, kv::KVCacheManager& kv) : config_(config), kv_(kv) {}

void Scheduler::enqueue_waiting(Sequence* seq, bool front) {
  seq->status = SeqStatus::Waiting;
  if (!config_.priority) {
    if (front) {
      waiting_.push_front(seq);
    } else {
      waiting_.push_back(seq);
    }
    return;
  }
  // Priority order: lower value first, then earlier arrival (a preempted request keeps its place by arrival).
  auto before = [](const Sequence* a, const Sequence* b) {
    if (a->request.priority != b->request.priority) return a->request.priority < b->request.priority;
    return a->arrival < b->arrival;
  };
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), seq, before), seq);
}

void Scheduler::add(Sequence* seq) { enqueue_waiting(seq, /*front=*/false); }

void Scheduler::add_running(Sequence* seq) {
  // The KV under its id must be exactly what it has computed: it owns those slots and no others.
  KAIRO_CHECK(kv_.has_request(seq->id) && seq->n_computed == kv_.n_tokens(seq->id),
              "scheduler: request %llu starts running with %d tokens computed but %d slots in the KV cache",
              static_cast<unsigned long long>(seq->id), seq->n_computed, kv_.n_tokens(seq->id));
  seq->status = SeqStatus::Running;
  seq->admitted_once = true;
  seq->admit_seq = next_admit_seq_++;
  running_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  drop(seq);
  kv_.free(seq->id);
  if (fair_.active() && config_.fair_linger_steps > 0) {
    const std::string& name = seq->request.tenant;
    auto it = std::find_if(lingering_.begin(), lingering_.end(), [&](const Lingering& l) { return l.tenant == name; });
    if (it == lingering_.end()) {
      it = lingering_.insert(lingering_.end(), Lingering{name, seq->request.tenant_weight, 0});
    }
    it->n_steps = config_.fair_linger_steps;
  }
}

void Scheduler::drop(Sequence* seq) {
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), seq), waiting_.end());
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  seq->status = SeqStatus::Finished;
}

void Scheduler::preempt(Sequence* seq, StepPlan& plan) {
  if (seq->decode_turn) {  // chosen for this step but not placed: its tenant's tokens go back to its prompt chunks
    seq->decode_turn = false;
    if (fair_.active()) --fair_.tenant(seq->request.tenant).reserved;
  }
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  kv_.free(seq->id);
  seq->n_computed = 0;  // recompute from its tokens so far; the prefix cache usually returns most of them
  ++n_preemptions_;
  plan.preempted.push_back(seq);
  enqueue_waiting(seq, /*front=*/true);
}

int Scheduler::chunk_size(const Sequence& seq, int budget, int n_long) const {
  int n = std::min(seq.n_uncomputed(), budget);
  if (n > config_.long_prefill_threshold && n_long >= config_.max_long_prefills) {
    n = config_.long_prefill_threshold;  // another long prefill already runs this step: take a short chunk
  }
  return n;
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  int budget = config_.max_num_batched_tokens;
  int n_long = 0;
  ++n_steps_;

  // 1. Running requests, oldest admission first; preempt from the newest end when blocks run out.
  begin_fair_step(budget);
  const bool fair = fair_.active();
  if (fair) choose_decode_turns();
  if (!fair && config_.fair_solo_budget > 0) budget = solo_budget(budget);
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence* seq = running_[i];
    const bool decode = seq->n_uncomputed() == 1;
    int n_new = chunk_size(*seq, budget, n_long);
    // Fairly: a decode runs when its turn was chosen; a prompt chunk takes what its tenant's share leaves after the
    // tenant's chosen decodes.
    if (fair && decode && !seq->decode_turn) n_new = 0;
    if (fair && !decode) n_new = std::min(n_new, fair_.tenant(seq->request.tenant).left_for_chunks());
    if (n_new <= 0) {
      ++i;
      continue;
    }
    // A decode with proposed tokens verifies them in the same chunk, from budget the running requests after it do
    // not need for their own next token (and, fairly, that its tenant's share has left).
    int n_draft = 0;
    if (decode && !seq->draft.empty()) {
      int spare = budget - static_cast<int>(running_.size() - i);
      if (fair) spare = std::min(spare, fair_.tenant(seq->request.tenant).left_for_chunks());
      n_draft = std::clamp(spare, 0, static_cast<int>(seq->draft.size()));
      n_new += n_draft;
    }
    std::optional<kv::SlotAllocation> alloc;
    bool self_preempted = false;
    while (!(alloc = kv_.allocate_slots(seq->id, seq->tokens, n_new, nullptr, n_draft))) {
      if (n_draft > 0) {  // no room for the guesses: never preempt anyone for them
        n_new -= n_draft;
        n_draft = 0;
        continue;
      }
      Sequence* victim = running_[pick_victim(i)];
      preempt(victim, plan);
      if (victim == seq) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;  // everything after it was preempted too
    plan.copies.insert(plan.copies.end(), alloc->copies.begin(), alloc->copies.end());
    plan.chunks.push_back({seq, seq->n_computed, n_new,
                           seq->n_computed + n_new - n_draft == static_cast<int>(seq->tokens.size()), n_draft});
    budget -= n_new;
    plan.n_tokens += n_new;
    if (n_new > config_.long_prefill_threshold) ++n_long;
    seq->served_step = n_steps_;
    if (fair) {
      FairShare::Tenant& t = fair_.tenant(seq->request.tenant);
      t.used += n_new;
      if (seq->decode_turn) --t.reserved;
    }
    seq->decode_turn = false;
    ++i;
  }

  // 2. Waiting requests, unless this step had to preempt (then memory is too tight to admit more).
  if (plan.preempted.empty()) {
    if (fair) {
      admit_waiting_fairly(budget, n_long, plan);
    } else {
      admit_waiting_in_order(budget, n_long, plan);
    }
  }
  if (fair) {
    for (const ScheduledChunk& c : plan.chunks) {
      fair_.charge(c.seq->request.tenant, fair_.tenant(c.seq->request.tenant).weight, c.n_new);
    }
  }
  kv_.check_accounting();  // O(1): every block is either free or referenced, after every step's allocations and frees
  return plan;
}

void Scheduler::admit_waiting_in_order(int& budget, int& n_long, StepPlan& plan) {
  while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < config_.max_num_seqs) {
    Sequence* seq = waiting_.front();
    if (!try_admit(seq, budget, n_long, plan)) break;
    waiting_.pop_front();
    const ScheduledChunk& c = plan.chunks.back();
    budget -= c.n_new;
    plan.n_tokens += c.n_new;
    if (c.n_new > config_.long_prefill_threshold) ++n_long;
  }
}

void Scheduler::admit_waiting_fairly(int& budget, int& n_long, StepPlan& plan) {
  const int n_waiting_tenants = fair_.n_waiting_tenants();
  std::vector<const std::string*> seen;
  while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < config_.max_num_seqs) {
    // Each tenant's first waiting request (queue order within a tenant stays FCFS or priority order). A tenant below
    // its seat share goes before one at or above it; then the least virtual time.
    Sequence* pick = nullptr;
    bool pick_under = false;
    double pick_key = 0;
    seen.clear();
    for (Sequence* seq : waiting_) {
      const std::string& name = seq->request.tenant;
      if (std::any_of(seen.begin(), seen.end(), [&](const std::string* s) { return *s == name; })) continue;
      seen.push_back(&name);
      const FairShare::Tenant& t = fair_.tenant(name);
      if (t.left_for_chunks() > 0) {
        const bool under = t.running < t.seat_share;
        const double key = fair_.finish_time(name);
        if (!pick || (under && !pick_under) || (under == pick_under && key < pick_key)) {
          pick = seq;
          pick_under = under;
          pick_key = key;
        }
      }
      if (static_cast<int>(seen.size()) == n_waiting_tenants) break;
    }
    if (!pick) break;
    FairShare::Tenant& t = fair_.tenant(pick->request.tenant);
    if (!try_admit(pick, std::min(budget, t.left_for_chunks()), n_long, plan)) break;
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), pick));
    const ScheduledChunk& c = plan.chunks.back();
    budget -= c.n_new;
    plan.n_tokens += c.n_new;
    if (c.n_new > config_.long_prefill_threshold) ++n_long;
    t.used += c.n_new;
    ++t.running;
  }
}

void Scheduler::begin_fair_step(int budget) {
  // The common case, one tenant at work, costs one string compare per request and keeps the plain order.
  const std::string* first = nullptr;
  bool several = false;
  auto note = [&](const Sequence* seq) {
    if (!first) first = &seq->request.tenant;
    several = several || *first != seq->request.tenant;
  };
  for (const Sequence* seq : running_) note(seq);
  for (size_t i = 0; i < waiting_.size() && !several; ++i) note(waiting_[i]);
  // A tenant whose request just ended counts as at work for a few more steps, with nothing to run
  // (SchedulerConfig::fair_linger_steps); then it is gone.
  for (const Lingering& l : lingering_) several = several || (first && *first != l.tenant);
  std::unordered_map<std::string, FairShare::Tenant> tenants;
  if (several) {
    for (const Lingering& l : lingering_) {
      FairShare::Tenant& t = tenants[l.tenant];
      t.weight = std::isfinite(l.weight) && l.weight > 0 ? l.weight : 1.0;
    }
    auto entry = [&](const Sequence* seq) -> FairShare::Tenant& {
      FairShare::Tenant& t = tenants[seq->request.tenant];
      const double w = seq->request.tenant_weight;
      t.weight = std::isfinite(w) && w > 0 ? w : 1.0;
      return t;
    };
    for (const Sequence* seq : running_) {
      FairShare::Tenant& t = entry(seq);
      ++t.running;
      t.prompt = t.prompt || seq->n_uncomputed() > 1;
      t.demand += seq->n_uncomputed() == 1 ? 1 + static_cast<int>(seq->draft.size())
                                           : std::min(seq->n_uncomputed(), budget);
    }
    for (const Sequence* seq : waiting_) {
      FairShare::Tenant& t = entry(seq);
      t.waiting = true;
      t.prompt = true;
      t.demand += std::min(seq->n_uncomputed(), budget);
    }
    for (auto& [name, t] : tenants) t.demand = std::min(t.demand, budget);
  } else if (first) {
    tenants[*first];  // alone: not a fair step, but the incumbent of the next one (FairShare::begin_step)
  }
  for (Lingering& l : lingering_) --l.n_steps;
  lingering_.erase(
      std::remove_if(lingering_.begin(), lingering_.end(), [](const Lingering& l) { return l.n_steps <= 0; }),
      lingering_.end());
  fair_.begin_step(std::move(tenants), budget, config_.max_num_seqs, config_.fair_min_chunk);
}

void Scheduler::choose_decode_turns() {
  // Per tenant, as many of its decodes as its share holds, least recently served first (then oldest admission): one
  // held back this step is among the first next step, so none waits more than about n_decodes / share steps.
  std::unordered_map<std::string, std::vector<Sequence*>> decodes;
  for (Sequence* seq : running_) {
    seq->decode_turn = false;
    if (seq->n_uncomputed() == 1) decodes[seq->request.tenant].push_back(seq);
  }
  for (auto& [name, seqs] : decodes) {
    FairShare::Tenant& t = fair_.tenant(name);
    const size_t n = std::min(seqs.size(), static_cast<size_t>(std::max(t.allowance, 0)));
    std::partial_sort(seqs.begin(), seqs.begin() + static_cast<std::ptrdiff_t>(n), seqs.end(),
                      [](const Sequence* a, const Sequence* b) {
                        return a->served_step != b->served_step ? a->served_step < b->served_step
                                                                : a->admit_seq < b->admit_seq;
                      });
    for (size_t k = 0; k < n; ++k) seqs[k]->decode_turn = true;
    t.reserved = static_cast<int>(n);
  }
}

int Scheduler::solo_budget(int budget) const {
  int n_decodes = 0;
  for (const Sequence* seq : running_) n_decodes += seq->n_uncomputed() == 1 ? 1 : 0;
  return std::min(budget, std::max(config_.fair_solo_budget, n_decodes));
}

size_t Scheduler::pick_victim(size_t i) const {
  if (!fair_.active() || i + 1 >= running_.size()) return running_.size() - 1;
  // The newest request of the tenant served most, among those after i.
  size_t best = running_.size() - 1;
  double best_key = fair_.finish_time(running_[best]->request.tenant);
  for (size_t j = running_.size() - 1; j-- > i + 1;) {
    const double key = fair_.finish_time(running_[j]->request.tenant);
    if (key > best_key) {
      best = j;
      best_key = key;
    }
  }
  return best;
}

bool Scheduler::try_admit(Sequence* seq, int budget, int n_long, StepPlan& plan) {
  // A waiting request holds no KV: blocks still under its id would be adopted by it as well as kept by their holder.
  KAIRO_CHECK(seq->n_computed == 0 && !kv_.has_request(seq->id),
              "scheduler: admitting request %llu with %d tokens computed and %d slots already in the KV cache",
              static_cast<unsigned long long>(seq->id), seq->n_computed, kv_.n_tokens(seq->id));
  kv::PrefixHit hit = kv_.get_computed_blocks(seq->tokens, seq->kv_salt);
  seq->n_computed = hit.n_tokens;
  const int n_new = chunk_size(*seq, budget, n_long);
  auto alloc = n_new > 0 ? kv_.allocate_slots(seq->id, seq->tokens, n_new, &hit) : std::nullopt;
  if (!alloc) {
    seq->n_computed = 0;
    return false;
  }
  // Nothing allocated between the lookup and the allocation, so the whole hit was adopted.
  KAIRO_CHECK(alloc->n_cached_tokens == hit.n_tokens,
              "scheduler: request %llu adopted %d of its %d cached prompt tokens",
              static_cast<unsigned long long>(seq->id), alloc->n_cached_tokens, hit.n_tokens);
  seq->n_computed = alloc->n_cached_tokens;
  if (!seq->admitted_once) {
    seq->n_cached_prompt = std::min(seq->n_computed, seq->n_prompt);
    seq->admitted_once = true;
  }
  seq->status = SeqStatus::Running;
  seq->admit_seq = next_admit_seq_++;
  seq->served_step = n_steps_;
  running_.push_back(seq);
  plan.copies.insert(plan.copies.end(), alloc->copies.begin(), alloc->copies.end());
  plan.chunks.push_back({seq, seq->n_computed, n_new, seq->n_computed + n_new == static_cast<int>(seq->tokens.size())});
  return true;
}

void Scheduler::complete(const StepPlan& plan) {
  for (const ScheduledChunk& c : plan.chunks) c.seq->n_computed = c.start + c.n_new;
}

void Scheduler::reject_draft(Sequence& seq, int n_rejected) {
  KAIRO_CHECK(n_rejected >= 0 && n_rejected <= seq.n_computed,
              "scheduler: request %llu rejects %d proposed tokens with %d computed",
              static_cast<unsigned long long>(seq.id), n_rejected, seq.n_computed);
  if (n_rejected == 0) return;
  seq.n_computed -= n_rejected;
  kv_.rollback(seq.id, seq.n_computed);
}

}  // namespace kairo::engine
