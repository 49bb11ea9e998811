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
  static const std::string kBearer = "Bearer ";
  if (authorization_header.size() <= kBearer.size() ||
      authorization_header.compare(0, kBearer.size(), kBearer) != 0) {
    return false;
  }
  const std::string presented = trim(authorization_header.substr(kBearer.size()));
  bool ok = false;
  for (const auto& key : keys) ok |= constant_time_equals(presented, key);  // no early exit: every key is compared
  return ok;
}

}  // namespace kairo::server
