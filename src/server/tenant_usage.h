#pragma once
// Per-tenant usage: requests in flight (max_concurrent_requests), a token bucket (tokens_per_minute) and the counters
// /metrics shows. State is kept by tenant name, not by Tenant object, so a SIGHUP reload that keeps a name keeps its
// in-flight count and its bucket (a reload cannot reset a rate limit); names that a reload removes keep their
// counters. Thread-safe. Times are passed in, so tests drive the bucket with exact clocks.
//
// The bucket holds up to tokens_per_minute tokens and refills at tokens_per_minute / 60 per second. A request is
// admitted while the bucket is positive; its prompt tokens are taken at admission and its generated tokens as they
// arrive, both even into debt (a request's length is not known in advance), and the debt delays the next request.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "server/api_error.h"
#include "server/tenants.h"

namespace kairo::server {

// The limit a refusal names; the `limit` label of the rejection counter.
enum class TenantLimit { Concurrency, TokensPerMinute, Model };
constexpr size_t kNumTenantLimits = 3;
const char* tenant_limit_label(TenantLimit limit);  // "concurrency", "tokens_per_minute", "model"

struct TenantRefusal {
  TenantLimit limit = TenantLimit::Concurrency;
  std::string message;  // names the key's name, the limit and its value
  int retry_after_s = 0;  // tokens_per_minute: seconds until the bucket is positive again (>= 1)
};

// 429 + Retry-After (retry_after_s, or concurrency_retry_after_s for the concurrency limit), codes
// "tenant_concurrency_limit" / "tenant_token_rate_limit".
ApiError tenant_refusal_error(const TenantRefusal& refusal, int concurrency_retry_after_s);

// One tenant's counters, for /metrics.
struct TenantCounters {
  std::string name;
  int64_t n_requests = 0;  // admitted generation requests that reached the engine
  int64_t n_rejected[kNumTenantLimits] = {};
  int64_t n_prompt_tokens = 0;
  int64_t n_generation_tokens = 0;
  int n_in_flight = 0;
};

class TenantUsage {
 public:
  using Clock = std::chrono::steady_clock;

 private:
  struct State {
    int n_in_flight = 0;
    bool bucket_started = false;
    double bucket = 0;  // tokens; negative = debt
    Clock::time_point refilled;
    TenantCounters counters;
  };

 public:
  // One admitted request's hold on its tenant: its seat among max_concurrent_requests (given back exactly once, by
  // release() or the destructor, whichever comes first) and the tokens it is charged. Empty (default) for the
  // anonymous tenant: every call is a no-op. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }

    // The request reached the engine: counted in n_requests and n_prompt_tokens.
    void confirm();
    // The engine refused the request: the prompt tokens go back into the bucket.
    void refund();
    // Generated tokens, charged as they arrive.
    void charge_generated(int64_t n_tokens, Clock::time_point now = Clock::now());
    // The response ended (finished, failed or the client left): the seat is free.
    void release();
    bool held() const { return usage_ != nullptr && !released_; }

   private:
    friend class TenantUsage;
    TenantUsage* usage_ = nullptr;
    State* state_ = nullptr;
    std::shared_ptr<const Tenant> tenant_;
    int64_t n_prompt_tokens_ = 0;
    bool released_ = false;
  };

  // Admits one generation request (n choices and batched prompts count as one) carrying n_prompt_tokens, or says
  // which limit refuses it (and counts the refusal).
  std::variant<Lease, TenantRefusal> admit(const std::shared_ptr<const Tenant>& tenant, int64_t n_prompt_tokens,
                                           Clock::time_point now = Clock::now());
  // A refusal decided elsewhere (a model the key may not use).
  void count_refusal(const std::string& name, TenantLimit limit);
  // Makes the names known, so /metrics shows them (at zero) before their first request.
  void track(const std::vector<std::string>& names);
  // Every tenant ever tracked or admitted, by name.
  std::vector<TenantCounters> snapshot() const;

 private:
  State& state(const std::string& name);  // under mutex_
  void refill(State& s, int64_t tokens_per_minute, Clock::time_point now);  // under mutex_

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<State>> states_;  // never erased: leases point into them
};

using TenantLease = TenantUsage::Lease;

}  // namespace kairo::server
