#pragma once
// Weighted fair sharing of the scheduler's steps between tenants (Request::tenant, Request::tenant_weight).
//
// With one tenant at work the scheduler runs plain FCFS (or priority) order. With two or more, each step is split:
//   - Token budget: a weighted max-min fair split over the tenants' demands (their running requests' next chunks and
//     their waiting prompts). A tenant that needs less than its share gets what it needs; the rest is split again
//     among the others by weight, so the step is never left idle while someone has work (work-conserving).
//   - Sequence seats (max_num_seqs): a waiting tenant below its weighted share of the seats is admitted before one at
//     or above it.
//   - Order: among the tenants with waiting requests, the one with the least weighted service so far (virtual time =
//     tokens served / weight, as in start-time fair queueing) is admitted first. No tenant trails the most-served one
//     by more than one step's budget of its own tokens (budget / weight, its credit); a tenant that joins a tenant
//     already at work, or comes back after being idle, starts that far behind, so idling banks at most that much.
//   - Step length: the tokens of a step all finish when the step does, so a tenant whose prompt or decode shares a
//     step with another tenant's long prompt chunk waits for that chunk too. A tenant's share is therefore also
//     capped at its weighted level against the largest other share in the step (with equal weights: no more tokens
//     than the biggest other tenant gets), but never below min_chunk tokens. This is fair in time rather than in
//     tokens, and not work-conserving within a step: while another tenant decodes, a long prompt advances min_chunk
//     tokens per step, and the steps stay short enough for the decoding tenant's next token (measured in the
//     closing note of issue 25 with `kairo bench serve --background-api-key`).
//   - Yield to a lagging prompt: when another tenant's prompt tokens of this step would all finish, in virtual time,
//     before a tenant's first token starts (it was served less, by at least that much), the tenant ahead is held to
//     min_chunk tokens for the step and what it leaves goes to the prompt, which gets a short step of its own and its
//     first token soon. The credit bounds the lag, so yields are brief and the split stays even over a few steps.
//     This is what keeps an interactive tenant's time to first token near its time alone during another's burst.
// Decodes count against their tenant's share like prompt tokens (the step is as long for them). When the share is
// smaller than a tenant's running decodes, the scheduler rotates which of them run (least recently served first), so
// each still gets a token every few steps; its prompt chunks take what its decodes leave. With one tenant at work,
// none of this applies and every decode runs every step.
#include <string>
#include <unordered_map>
#include <vector>

namespace kairo::engine {

// Weighted max-min fair split of `budget` tokens over demands (weights > 0): sums to min(budget, Σ demand), no
// entry above its demand, integer tokens (the remainders go to the largest fractional shares, earlier first on ties).
std::vector<int> split_fairly(const std::vector<int>& demands, const std::vector<double>& weights, int budget);

class FairShare {
 public:
  struct Tenant {
    double weight = 1;
    int demand = 0;        // tokens it could use this step
    int allowance = 0;     // its share of this step's budget
    int used = 0;          // tokens scheduled for it so far this step
    int running = 0;       // its running sequences
    int seat_share = 0;    // its share of max_num_seqs
    bool waiting = false;  // it has requests in the waiting queue
    bool prompt = false;   // it has prompt tokens to compute (a waiting request, or a running one mid-prompt)
    int reserved = 0;      // its decodes chosen for this step and not placed yet (Scheduler::schedule)
    int left() const { return allowance - used; }
    int left_for_chunks() const { return left() - reserved; }  // what its prompt chunks may take
  };

  // Starts a step: `tenants` maps each tenant at work to its entry (weight, demand, running, waiting filled in).
  // Computes allowances and seat shares, and lifts returning tenants to the virtual clock.
  void begin_step(std::unordered_map<std::string, Tenant> tenants, int budget, int max_num_seqs, int min_chunk);
  bool active() const { return tenants_.size() >= 2; }

  Tenant& tenant(const std::string& name) { return tenants_.at(name); }
  int n_waiting_tenants() const;
  // Virtual time after what the tenant was given so far this step: the admission order key.
  double finish_time(const std::string& name) const;
  // Adds a step's scheduled tokens to the tenant's virtual time (call once per chunk, after the step is planned).
  void charge(const std::string& name, double weight, int n_tokens);

 private:
  std::unordered_map<std::string, Tenant> tenants_;   // this step's tenants at work
  std::unordered_map<std::string, double> vtime_;     // tokens served / weight, over the tenant's active periods
  std::unordered_map<std::string, bool> was_active_;  // at work in the previous fair step
};

}  // namespace kairo::engine
