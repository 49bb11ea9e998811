#include "server/tenant_usage.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/format.h"

namespace kairo::server {

namespace {

double tokens_per_second(int64_t tokens_per_minute) { return static_cast<double>(tokens_per_minute) / 60.0; }

// Whole seconds until a bucket at `level` (<= 0) is positive again: past the point where it reaches 0, so >= 1.
int seconds_until_positive(double level, int64_t tokens_per_minute) {
  const double wait = -level / tokens_per_second(tokens_per_minute);
  return static_cast<int>(std::min(std::floor(wait), 86400.0)) + 1;
}

}  // namespace

const char* tenant_limit_label(TenantLimit limit) {
  switch (limit) {
    case TenantLimit::Concurrency: return "concurrency";
    case TenantLimit::TokensPerMinute: return "tokens_per_minute";
    default: return "model";
  }
}

ApiError tenant_refusal_error(const TenantRefusal& refusal, int concurrency_retry_after_s) {
  const bool concurrency = refusal.limit == TenantLimit::Concurrency;
  ApiError e = api_error(429, refusal.message, concurrency ? "tenant_concurrency_limit" : "tenant_token_rate_limit");
  e.headers.emplace_back("Retry-After",
                         std::to_string(concurrency ? concurrency_retry_after_s : refusal.retry_after_s));
  return e;
}

TenantUsage::Lease& TenantUsage::Lease::operator=(Lease&& other) noexcept {
  if (this == &other) return *this;
  release();
  usage_ = std::exchange(other.usage_, nullptr);
  state_ = std::exchange(other.state_, nullptr);
  tenant_ = std::move(other.tenant_);
  n_prompt_tokens_ = other.n_prompt_tokens_;
  released_ = std::exchange(other.released_, false);
  return *this;
}

void TenantUsage::Lease::confirm() {
  if (!usage_) return;
  std::lock_guard lock(usage_->mutex_);
  ++state_->counters.n_requests;
  state_->counters.n_prompt_tokens += n_prompt_tokens_;
}

void TenantUsage::Lease::refund() {
  if (!usage_ || tenant_->tokens_per_minute <= 0) return;
  std::lock_guard lock(usage_->mutex_);
  state_->bucket = std::min(state_->bucket + static_cast<double>(n_prompt_tokens_),
                            static_cast<double>(tenant_->tokens_per_minute));
  n_prompt_tokens_ = 0;
}

void TenantUsage::Lease::charge_generated(int64_t n_tokens, Clock::time_point now) {
  if (!usage_ || n_tokens <= 0) return;
  std::lock_guard lock(usage_->mutex_);
  state_->counters.n_generation_tokens += n_tokens;
  if (tenant_->tokens_per_minute > 0) {
    usage_->refill(*state_, tenant_->tokens_per_minute, now);
    state_->bucket -= static_cast<double>(n_tokens);
  }
}

void TenantUsage::Lease::release() {
  if (!usage_ || released_) return;
  released_ = true;
  std::lock_guard lock(usage_->mutex_);
  --state_->n_in_flight;
}

TenantUsage::State& TenantUsage::state(const std::string& name) {
  auto& slot = states_[name];
  if (!slot) {
    slot = std::make_unique<State>();
    slot->counters.name = name;
  }
  return *slot;
}

void TenantUsage::refill(State& s, int64_t tokens_per_minute, Clock::time_point now) {
  const double capacity = static_cast<double>(tokens_per_minute);
  if (!s.bucket_started) {  // first use under a limit: a full bucket
    s.bucket_started = true;
    s.bucket = capacity;
    s.refilled = now;
    return;
  }
  if (now > s.refilled) {
    const double elapsed = std::chrono::duration<double>(now - s.refilled).count();
    s.bucket = std::min(capacity, s.bucket + elapsed * tokens_per_second(tokens_per_minute));
    s.refilled = now;
  }
  s.bucket = std::min(s.bucket, capacity);  // a reload may have lowered the limit
}

std::variant<TenantUsage::Lease, TenantRefusal> TenantUsage::admit(const std::shared_ptr<const Tenant>& tenant,
                                                                   int64_t n_prompt_tokens, Clock::time_point now) {
  if (!tenant) return Lease{};
  const Tenant& t = *tenant;
  std::lock_guard lock(mutex_);
  State& s = state(t.name);
  if (t.max_concurrent_requests > 0 && s.n_in_flight >= t.max_concurrent_requests) {
    ++s.counters.n_rejected[static_cast<size_t>(TenantLimit::Concurrency)];
    return TenantRefusal{TenantLimit::Concurrency,
                         strprintf("key '%s' has %d request%s in flight, its max_concurrent_requests limit; retry "
                                   "when one finishes",
                                   t.name.c_str(), s.n_in_flight, s.n_in_flight == 1 ? "" : "s")};
  }
  if (t.tokens_per_minute > 0) {
    refill(s, t.tokens_per_minute, now);
    if (s.bucket <= 0) {
      ++s.counters.n_rejected[static_cast<size_t>(TenantLimit::TokensPerMinute)];
      const int retry = seconds_until_positive(s.bucket, t.tokens_per_minute);
      return TenantRefusal{
          TenantLimit::TokensPerMinute,
          strprintf("key '%s' has used up its tokens_per_minute limit of %lld (prompt plus generated tokens); retry "
                    "in %d s",
                    t.name.c_str(), static_cast<long long>(t.tokens_per_minute), retry),
          retry};
    }
    s.bucket -= static_cast<double>(n_prompt_tokens);
  }
  ++s.n_in_flight;
  Lease lease;
  lease.usage_ = this;
  lease.state_ = &s;
  lease.tenant_ = tenant;
  lease.n_prompt_tokens_ = n_prompt_tokens;
  return lease;
}

void TenantUsage::count_refusal(const std::string& name, TenantLimit limit) {
  std::lock_guard lock(mutex_);
  ++state(name).counters.n_rejected[static_cast<size_t>(limit)];
}

void TenantUsage::track(const std::vector<std::string>& names) {
  std::lock_guard lock(mutex_);
  for (const auto& name : names) state(name);
}

std::vector<TenantCounters> TenantUsage::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<TenantCounters> out;
  out.reserve(states_.size());
  for (const auto& [name, s] : states_) {
    out.push_back(s->counters);
    out.back().n_in_flight = s->n_in_flight;
  }
  return out;
}

}  // namespace kairo::server
