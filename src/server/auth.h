#pragma once
// API keys: `Authorization: Bearer <key>` (or Anthropic's `x-api-key: <key>`) checked against every configured key
// in time that does not depend on where (or whether) the strings differ, so response timing leaks nothing about a key.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/tenants.h"

namespace kairo::server {

// Keys from a file: one per line; blank lines and lines starting with '#' skipped; surrounding whitespace trimmed.
Result<std::vector<std::string>> load_api_key_file(const std::string& path);

// True when `a` equals `b`; runs over max(len) bytes regardless of content.
bool constant_time_equals(const std::string& a, const std::string& b);

// True when the Authorization header value carries one of the keys (or no keys are configured).
bool authorized(const std::vector<std::string>& keys, const std::string& authorization_header);

// Who sent a request. `tenant` is null for the anonymous tenant: a server without keys, or a key given with
// --api-key / --api-key-file, which has a name nowhere and no limits. A request keeps the Tenant it was admitted with
// (a reload makes new ones; in-flight requests keep theirs).
struct Caller {
  std::shared_ptr<const Tenant> tenant;

  const std::string& name() const;  // "" for the anonymous tenant
  double weight() const { return tenant ? tenant->weight : 1.0; }
};

// The keys the server accepts: plain keys (anonymous) and named tenants from the keys file. Thread-safe; set_tenants
// swaps the whole tenant set at once (SIGHUP reload), so a request sees the old set or the new one, never a mix.
class KeyRing {
 public:
  explicit KeyRing(std::vector<std::string> plain_keys = {});

  // Replaces the tenants. Refused (the old ones stay) when a tenant's key is also a plain key.
  Status set_tenants(std::vector<Tenant> tenants);
  std::vector<std::shared_ptr<const Tenant>> tenants() const;
  size_t n_tenants() const;

  // The caller whose key the Authorization header carries, or nullopt (401). Every configured key is compared in
  // full, whichever matches, so the time taken says nothing about which key (or how much of one) matched. With no
  // keys at all, everyone is the anonymous caller.
  std::optional<Caller> authenticate(const std::string& authorization_header) const;
  // The same with Anthropic's `x-api-key` header (its clients send the key there) as the fallback: Authorization
  // decides when it is present, else x-api-key's value is the key.
  std::optional<Caller> authenticate(const std::string& authorization_header, const std::string& x_api_key) const;

 private:
  std::optional<Caller> find_caller(const std::optional<std::string>& presented_key) const;

  const std::vector<std::string> plain_keys_;
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<std::shared_ptr<const Tenant>>> tenants_;
};

}  // namespace kairo::server
