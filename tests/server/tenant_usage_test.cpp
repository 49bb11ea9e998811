// Per-tenant usage with exact clocks: the concurrency seat is taken at admission and given back exactly once, the
// token bucket refills at tokens_per_minute / 60 per second up to its capacity, goes into debt, and says when it is
// positive again; state is kept by name across Tenant objects (a reload).
#include <gtest/gtest.h>

#include <chrono>

#include "server/tenant_usage.h"

namespace kairo::server {
namespace {

using Clock = TenantUsage::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::shared_ptr<const Tenant> tenant(const std::string& name, int max_concurrent, int64_t tpm) {
  auto t = std::make_shared<Tenant>();
  t->name = name;
  t->key = "sk-" + name;
  t->max_concurrent_requests = max_concurrent;
  t->tokens_per_minute = tpm;
  return t;
}

TenantCounters counters(const TenantUsage& usage, const std::string& name) {
  for (const auto& c : usage.snapshot()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no counters for " << name;
  return {};
}

TEST(TenantUsageTest, AnonymousTenantIsNeverLimitedNorCounted) {
  TenantUsage usage;
  auto r = usage.admit(nullptr, 1000000);
  ASSERT_TRUE(std::holds_alternative<TenantLease>(r));
  EXPECT_FALSE(std::get<TenantLease>(r).held());
  EXPECT_TRUE(usage.snapshot().empty());
}

TEST(TenantUsageTest, ConcurrencySeatIsReleasedExactlyOnce) {
  TenantUsage usage;
  const auto t = tenant("team-a", 2, 0);
  auto first = usage.admit(t, 5);
  auto second = usage.admit(t, 5);
  ASSERT_TRUE(std::holds_alternative<TenantLease>(first));
  ASSERT_TRUE(std::holds_alternative<TenantLease>(second));
  auto third = usage.admit(t, 5);
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(third));
  const TenantRefusal& refusal = std::get<TenantRefusal>(third);
  EXPECT_EQ(refusal.limit, TenantLimit::Concurrency);
  EXPECT_EQ(refusal.message,
            "key 'team-a' has 2 requests in flight, its max_concurrent_requests limit; retry when one finishes");
  EXPECT_EQ(counters(usage, "team-a").n_in_flight, 2);
  EXPECT_EQ(counters(usage, "team-a").n_rejected[static_cast<size_t>(TenantLimit::Concurrency)], 1);

  TenantLease lease = std::move(std::get<TenantLease>(first));
  lease.release();
  lease.release();  // a second release (and the destructor) gives nothing back twice
  EXPECT_EQ(counters(usage, "team-a").n_in_flight, 1);
  {
    TenantLease moved = std::move(std::get<TenantLease>(second));  // released by its destructor, once
    EXPECT_TRUE(moved.held());
  }
  EXPECT_EQ(counters(usage, "team-a").n_in_flight, 0);
  lease = TenantLease{};
  EXPECT_EQ(counters(usage, "team-a").n_in_flight, 0);
  EXPECT_TRUE(std::holds_alternative<TenantLease>(usage.admit(t, 5)));  // released by the temporary's destructor
  EXPECT_EQ(counters(usage, "team-a").n_in_flight, 0);
}

TEST(TenantUsageTest, TokenBucketChargesRefillsAndNamesTheWait) {
  TenantUsage usage;
  const auto t = tenant("team-a", 0, 600);  // 10 tokens per second, 600 at most
  const Clock::time_point t0{};
  auto r = usage.admit(t, 500, t0);  // a full bucket: 600 -> 100
  ASSERT_TRUE(std::holds_alternative<TenantLease>(r));
  TenantLease lease = std::move(std::get<TenantLease>(r));
  lease.confirm();
  lease.charge_generated(300, t0);  // 100 -> -200: debt is allowed
  // 5 s later: -200 + 50 = -150, refused; positive after 15 s more, so "retry in 16 s" (past the point of 0).
  auto refused = usage.admit(t, 1, t0 + seconds(5));
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(refused));
  EXPECT_EQ(std::get<TenantRefusal>(refused).limit, TenantLimit::TokensPerMinute);
  EXPECT_EQ(std::get<TenantRefusal>(refused).retry_after_s, 16);
  EXPECT_EQ(std::get<TenantRefusal>(refused).message,
            "key 'team-a' has used up its tokens_per_minute limit of 600 (prompt plus generated tokens); retry in "
            "16 s");
  const ApiError e = tenant_refusal_error(std::get<TenantRefusal>(refused), 1);
  EXPECT_EQ(e.status, 429);
  EXPECT_EQ(e.code, "tenant_token_rate_limit");
  EXPECT_EQ(e.type, "rate_limit_error");
  EXPECT_EQ(e.headers, (HeaderList{{"Retry-After", "16"}}));
  // At exactly 0 the bucket is still empty: refused, retry in 1 s.
  auto at_zero = usage.admit(t, 1, t0 + seconds(20));
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(at_zero));
  EXPECT_EQ(std::get<TenantRefusal>(at_zero).retry_after_s, 1);
  EXPECT_TRUE(std::holds_alternative<TenantLease>(usage.admit(t, 1, t0 + seconds(20) + milliseconds(100))));
  // Refill is capped at the capacity: after an hour, 600 tokens, not 36,000.
  auto big = usage.admit(t, 700, t0 + seconds(3600));
  ASSERT_TRUE(std::holds_alternative<TenantLease>(big));
  auto after = usage.admit(t, 1, t0 + seconds(3600));
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(after));
  EXPECT_EQ(std::get<TenantRefusal>(after).retry_after_s, 11);  // 100 in debt at 10/s: positive after 10 s
  const TenantCounters c = counters(usage, "team-a");
  EXPECT_EQ(c.n_requests, 1);  // only the confirmed one
  EXPECT_EQ(c.n_prompt_tokens, 500);
  EXPECT_EQ(c.n_generation_tokens, 300);
  EXPECT_EQ(c.n_rejected[static_cast<size_t>(TenantLimit::TokensPerMinute)], 3);
}

TEST(TenantUsageTest, RefundGivesThePromptTokensBack) {
  TenantUsage usage;
  const auto t = tenant("team-a", 0, 60);
  const Clock::time_point t0{};
  auto r = usage.admit(t, 100, t0);  // 60 -> -40
  ASSERT_TRUE(std::holds_alternative<TenantLease>(r));
  std::get<TenantLease>(r).refund();  // -40 -> 60
  EXPECT_TRUE(std::holds_alternative<TenantLease>(usage.admit(t, 59, t0)));
  EXPECT_EQ(counters(usage, "team-a").n_prompt_tokens, 0);  // never confirmed
}

TEST(TenantUsageTest, StateIsKeptByNameAcrossAReload) {
  TenantUsage usage;
  const Clock::time_point t0{};
  auto before = usage.admit(tenant("team-a", 1, 60), 100, t0);  // in flight, bucket at -40
  ASSERT_TRUE(std::holds_alternative<TenantLease>(before));
  // The reloaded Tenant object, same name and limits: the seat and the debt are still there.
  const auto reloaded = tenant("team-a", 1, 60);
  auto seat = usage.admit(reloaded, 1, t0);
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(seat));
  EXPECT_EQ(std::get<TenantRefusal>(seat).limit, TenantLimit::Concurrency);
  std::get<TenantLease>(before).release();
  auto debt = usage.admit(reloaded, 1, t0 + seconds(1));
  ASSERT_TRUE(std::holds_alternative<TenantRefusal>(debt));
  EXPECT_EQ(std::get<TenantRefusal>(debt).limit, TenantLimit::TokensPerMinute);
  EXPECT_EQ(std::get<TenantRefusal>(debt).retry_after_s, 40);  // -39 at 1/s
  // Another name starts with a full bucket of its own.
  EXPECT_TRUE(std::holds_alternative<TenantLease>(usage.admit(tenant("team-b", 1, 60), 10, t0)));
  usage.track({"team-c"});
  usage.count_refusal("team-c", TenantLimit::Model);
  const auto snap = usage.snapshot();
  ASSERT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[2].name, "team-c");
  EXPECT_EQ(snap[2].n_rejected[static_cast<size_t>(TenantLimit::Model)], 1);
  EXPECT_STREQ(tenant_limit_label(TenantLimit::Model), "model");
  EXPECT_STREQ(tenant_limit_label(TenantLimit::TokensPerMinute), "tokens_per_minute");
  EXPECT_STREQ(tenant_limit_label(TenantLimit::Concurrency), "concurrency");
}

}  // namespace
}  // namespace kairo::server
