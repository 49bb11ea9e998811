#include "server/auth.h"

#include <fstream>

#include "core/format.h"

namespace kairo::server {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The key after "Bearer ", or nullopt when the header is not a bearer credential.
std::optional<std::string> bearer_key(const std::string& authorization_header) {
  static const std::string kBearer = "Bearer ";
  if (authorization_header.size() <= kBearer.size() ||
      authorization_header.compare(0, kBearer.size(), kBearer) != 0) {
    return std::nullopt;
  }
  return trim(authorization_header.substr(kBearer.size()));
}

}  // namespace

Result<std::vector<std::string>> load_api_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{strprintf("cannot read the API key file %s (--api-key-file)", path.c_str())};
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    const std::string key = trim(line);
    if (key.empty() || key[0] == '#') continue;
    keys.push_back(key);
  }
  if (keys.empty()) {
    return Error{strprintf("the API key file %s holds no keys (one per line; '#' starts a comment)", path.c_str())};
  }
  return keys;
}

bool constant_time_equals(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  // Through a volatile so the compiler cannot turn the loop into an early-exit compare.
  volatile unsigned char result = diff;
  return result == 0;
}

bool authorized(const std::vector<std::string>& keys, const std::string& authorization_header) {
  if (keys.empty()) return true;
  const std::optional<std::string> bearer = bearer_key(authorization_header);
  if (!bearer) return false;
  const std::string& presented = *bearer;
  bool ok = false;
  for (const auto& key : keys) ok |= constant_time_equals(presented, key);  // no early exit: every key is compared
  return ok;
}

const std::string& Caller::name() const {
  static const std::string kAnonymous;
  return tenant ? tenant->name : kAnonymous;
}

KeyRing::KeyRing(std::vector<std::string> plain_keys)
    : plain_keys_(std::move(plain_keys)),
      tenants_(std::make_shared<const std::vector<std::shared_ptr<const Tenant>>>()) {}

Status KeyRing::set_tenants(std::vector<Tenant> tenants) {
  auto next = std::make_shared<std::vector<std::shared_ptr<const Tenant>>>();
  for (auto& t : tenants) {
    for (const auto& plain : plain_keys_) {
      if (t.key == plain) {
        return Error{strprintf("the key of %s is also given with --api-key or --api-key-file; a key belongs to one "
                               "tenant",
                               quote_for_error(t.name).c_str())};
      }
    }
    next->push_back(std::make_shared<const Tenant>(std::move(t)));
  }
  std::lock_guard lock(mutex_);
  tenants_ = std::move(next);
  return Status::success();
}

std::vector<std::shared_ptr<const Tenant>> KeyRing::tenants() const {
  std::lock_guard lock(mutex_);
  return *tenants_;
}

size_t KeyRing::n_tenants() const {
  std::lock_guard lock(mutex_);
  return tenants_->size();
}

std::optional<Caller> KeyRing::authenticate(const std::string& authorization_header) const {
  return find_caller(bearer_key(authorization_header));
}

std::optional<Caller> KeyRing::authenticate(const std::string& authorization_header,
                                            const std::string& x_api_key) const {
  if (!authorization_header.empty() || x_api_key.empty()) return authenticate(authorization_header);
  return find_caller(trim(x_api_key));
}

std::optional<Caller> KeyRing::find_caller(const std::optional<std::string>& presented_key) const {
  std::shared_ptr<const std::vector<std::shared_ptr<const Tenant>>> tenants;
  {
    std::lock_guard lock(mutex_);
    tenants = tenants_;
  }
  if (plain_keys_.empty() && tenants->empty()) return Caller{};
  if (!presented_key) return std::nullopt;
  // No early exit and no data-dependent branch: every key is compared in full and the match is selected by masks.
  // Keys are unique (parse_tenants, set_tenants), so at most one matches.
  size_t match = 0;  // 0 = none, 1 = a plain key, 2 + i = tenant i
  for (const auto& key : plain_keys_) {
    const size_t mask = static_cast<size_t>(0) - static_cast<size_t>(constant_time_equals(*presented_key, key));
    match = (match & ~mask) | (size_t{1} & mask);
  }
  for (size_t i = 0; i < tenants->size(); ++i) {
    const size_t mask = static_cast<size_t>(0) - static_cast<size_t>(constant_time_equals(*presented_key, (*tenants)[i]->key));
    match = (match & ~mask) | ((i + 2) & mask);
  }
  if (match == 0) return std::nullopt;
  if (match == 1) return Caller{};
  return Caller{(*tenants)[match - 2]};
}

}  // namespace kairo::server
