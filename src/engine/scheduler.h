#pragma once
// The token-budget scheduler (vLLM v1 style): there are no prefill and decode phases. Each step, every running
// request asks for its uncomputed tokens (1 for a decode, a chunk for a prompt), running requests first, then
// waiting ones in FCFS (or priority) order, until the step's token budget or sequence cap is spent. Prompts longer
// than the budget are chunked. When KV blocks run out, the most recently admitted running request is preempted
// (its blocks freed, recomputed later from its tokens so far -- its output is kept, never lost or duplicated).
// While requests of two or more tenants (Request::tenant) are queued or running, each step's budget, seats and
// admission order are shared between them by weight (engine/fair_share.h), decodes included (a tenant's decodes
// beyond its share take turns), and the preempted request is the newest of the tenant served most.
//
// Bookkeeping only: the scheduler moves token counts and block ids, never tensors. Its invariants (a request holds KV
// exactly while admitted, and as many slots as it has computed; the pools' counts add up after every step) are
// checked in every build and throw InvariantViolation (core/check.h).
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/fair_share.h"
#include "engine/sequence.h"
#include "kv/kv_cache_manager.h"

namespace kairo::engine {

struct SchedulerConfig {
  int max_num_batched_tokens = 512;  // token budget of one step
  int max_num_seqs = 64;             // sequences in one step
  int long_prefill_threshold = 256;  // a prompt chunk longer than this is a "long prefill"
  int max_long_prefills = 1;         // long prefills per step, so decodes keep flowing
  bool priority = false;             // order the waiting queue by Request::priority, then arrival
  // With several tenants at work: the least a tenant's share of a step is cut to when another tenant's share is
  // smaller (engine/fair_share.h). Smaller keeps the other tenant's steps shorter; larger wastes less of each step.
  int fair_min_chunk = 16;
  // With several tenants at work: for this many steps after a tenant's request ends, that tenant still counts as at
  // work (with nothing to run), so the others' steps stay short until its client's next request can arrive. An
  // interactive client sends its next request a moment after the last one ends, and a step cannot be interrupted:
  // without this, the request would wait for a whole step of the other tenants' burst (issue 25's measurement).
  int fair_linger_steps = 2;
  // With API-key tenants (kairo serve --api-keys-file): a step's token budget while only one tenant has work; 0 = the
  // whole max_num_batched_tokens. Another tenant's request that arrives waits for the step in progress (a step cannot
  // be interrupted), so a shorter solo step bounds that wait; the sharing steps keep the whole budget for the
  // newcomer's prompt. It cuts prompt chunks only: the tenant's running decodes all still run every step.
  int fair_solo_budget = 0;
};

struct ScheduledChunk {
  Sequence* seq = nullptr;
  int start = 0;             // first token position computed this step
  int n_new = 0;             // tokens computed this step
  bool needs_sample = false; // the chunk reaches the last known token: sample the next one
  // The last n_draft of the n_new tokens are the sequence's proposed tokens (Sequence::draft), not yet its own;
  // every one of the chunk's positions then gets a logits row, to verify them.
  int n_draft = 0;
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<kv::BlockCopy> copies;     // copy-on-write, to run before the step's KV writes
  std::vector<Sequence*> preempted;      // moved back to waiting this step
  int n_tokens = 0;
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  Scheduler(SchedulerConfig config, kv::KVCacheManager& kv);

  void add(Sequence* seq);       // enqueue a new request
  // A request whose KV already exists (a fork of a running request): running from now on, newest admission.
  void add_running(Sequence* seq);
  void remove(Sequence* seq);    // finished or aborted: leaves the queues and frees its blocks
  // Leaves the queues without touching the KV manager: after a broken invariant (core/check.h) the engine no longer
  // trusts the block pool and never allocates from it again.
  void drop(Sequence* seq);
  StepPlan schedule();
  // After the forward pass: the scheduled tokens now have KV.
  void complete(const StepPlan& plan);
  // After verification: the last n_rejected proposed tokens computed for the sequence were not accepted. Their KV
  // slots go back (Sequence::n_computed and the KV manager roll back).
  void reject_draft(Sequence& seq, int n_rejected);

  int n_waiting() const { return static_cast<int>(waiting_.size()); }
  int n_running() const { return static_cast<int>(running_.size()); }
  int64_t n_preemptions() const { return n_preemptions_; }
  const SchedulerConfig& config() const { return config_; }

 private:
  void preempt(Sequence* seq, StepPlan& plan);
  // Fills fair_ for this step: tenants at work, their weights, demands and running counts.
  void begin_fair_step(int budget);
  // Marks the running decodes that fit their tenant's share this step (Sequence::decode_turn), in rotation.
  void choose_decode_turns();
  // The step's budget while one tenant has work (SchedulerConfig::fair_solo_budget), never below its running decodes.
  int solo_budget(int budget) const;
  // Index in running_ of the request to preempt so running_[i] gets KV: never one before i (already scheduled).
  size_t pick_victim(size_t i) const;
  void admit_waiting_in_order(int& budget, int& n_long, StepPlan& plan);
  void admit_waiting_fairly(int& budget, int& n_long, StepPlan& plan);
  bool try_admit(Sequence* seq, int budget, int n_long, StepPlan& plan);
  int chunk_size(const Sequence& seq, int budget, int n_long) const;
  void enqueue_waiting(Sequence* seq, bool front);

  SchedulerConfig config_;
  kv::KVCacheManager& kv_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // in admission order
  uint64_t next_admit_seq_ = 1;
  int64_t n_preemptions_ = 0;
  uint64_t n_steps_ = 0;  // steps planned: the rotation clock of Sequence::served_step
  struct Lingering {
    std::string tenant;
    double weight = 1;
    int n_steps = 0;  // steps it still counts as at work
  };
  std::vector<Lingering> lingering_;  // tenants whose request ended in a fair step (SchedulerConfig::fair_linger_steps)
  FairShare fair_;
};

}  // namespace kairo::engine
