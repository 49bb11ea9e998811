#include "server/tenants.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "core/format.h"
#include "core/mapped_file.h"

namespace kairo::server {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxNameBytes = 128;
constexpr const char* kFields = "name, key, max_concurrent_requests, tokens_per_minute, priority, weight, models";

const char* kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number with a fraction";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "something else";
  }
}

bool has_control_chars(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 32 || c == 127) return true;
  }
  return false;
}

// Reads one entry; `where` is "keys file F: keys[i]" (plus the name once known), the prefix of every error.
Result<Tenant> parse_entry(const json& e, std::string where) {
  auto fail = [&](const std::string& what) { return Error{where + ": " + what}; };
  if (!e.is_object()) {
    return fail(strprintf("must be an object like {\"name\": ..., \"key\": ...}, got %s", kind_of(e)));
  }
  Tenant t;
  // The name first, so every later error can name the entry.
  const auto name = e.find("name");
  if (name == e.end()) return fail("has no \"name\"; give each key a name (it labels the key's metrics and errors)");
  if (!name->is_string()) return fail(strprintf("\"name\" must be a string, got %s", kind_of(*name)));
  t.name = name->get<std::string>();
  if (t.name.empty()) return fail("\"name\" is empty; give each key a name");
  if (t.name.size() > kMaxNameBytes || has_control_chars(t.name)) {
    return fail(strprintf("\"name\" must be at most %zu bytes without control characters", kMaxNameBytes));
  }
  where += " (" + quote_for_error(t.name) + ")";

  for (const auto& [field, value] : e.items()) {
    if (field == "name") continue;
    if (field == "key") {
      if (!value.is_string()) return fail(strprintf("\"key\" must be a string, got %s", kind_of(value)));
      t.key = value.get<std::string>();
      if (t.key.empty()) return fail("\"key\" is empty; a key must be a non-empty secret");
      if (has_control_chars(t.key) || t.key.find(' ') != std::string::npos) {
        return fail("\"key\" holds spaces or control characters, which cannot travel in an Authorization header");
      }
    } else if (field == "max_concurrent_requests") {
      if (!value.is_number_integer()) {
        return fail(strprintf("\"max_concurrent_requests\" must be an integer, got %s", kind_of(value)));
      }
      const int64_t n = value.get<int64_t>();
      if (n < 0 || n > std::numeric_limits<int>::max()) {
        return fail(strprintf("\"max_concurrent_requests\" is %lld; use a count from 1 up, or 0 (or leave it out) "
                              "for no limit",
                              static_cast<long long>(n)));
      }
      t.max_concurrent_requests = static_cast<int>(n);
    } else if (field == "tokens_per_minute") {
      if (!value.is_number_integer()) {
        return fail(strprintf("\"tokens_per_minute\" must be an integer, got %s", kind_of(value)));
      }
      if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(int64_t{1} << 52)) {
        return fail("\"tokens_per_minute\" is too large; use at most 2^52, or 0 (or leave it out) for no limit");
      }
      const int64_t n = value.get<int64_t>();
      if (n < 0) {
        return fail(strprintf("\"tokens_per_minute\" is %lld; use a count from 1 up, or 0 (or leave it out) for no "
                              "limit",
                              static_cast<long long>(n)));
      }
      t.tokens_per_minute = n;
    } else if (field == "priority") {
      const std::string cls = value.is_string() ? value.get<std::string>() : "";
      if (cls == "high") {
        t.priority = PriorityClass::High;
      } else if (cls == "normal") {
        t.priority = PriorityClass::Normal;
      } else if (cls == "low") {
        t.priority = PriorityClass::Low;
      } else {
        return fail(strprintf("\"priority\" must be \"high\", \"normal\" or \"low\", got %s",
                              value.is_string() ? quote_for_error(cls).c_str() : kind_of(value)));
      }
    } else if (field == "weight") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
        return fail(strprintf("\"weight\" must be a positive number (the class weights are high 4, normal 1, low "
                              "0.25), got %s",
                              value.is_number() ? value.dump().c_str() : kind_of(value)));
      }
    } else if (field == "models") {
      if (!value.is_array()) {
        return fail(strprintf("\"models\" must be an array of model names, got %s; leave it out to allow every "
                              "model",
                              kind_of(value)));
      }
      if (value.empty()) {
        return fail("\"models\" is empty, which would allow no model; list the names, or leave it out to allow "
                    "every model");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string() || value[i].get<std::string>().empty()) {
          return fail(strprintf("\"models\"[%zu] must be a non-empty string, got %s", i,
                                value[i].is_string() ? "\"\"" : kind_of(value[i])));
        }
        t.models.push_back(value[i].get<std::string>());
      }
    } else {
      return fail(strprintf("unknown field %s; the fields are %s", quote_for_error(field).c_str(), kFields));
    }
  }
  if (t.key.empty()) return fail("has no \"key\"; add the secret clients send as 'Authorization: Bearer <key>'");
  // The class first, then an explicit weight overrides it (whatever the order of the fields).
  t.weight = priority_class_weight(t.priority);
  if (const auto w = e.find("weight"); w != e.end()) t.weight = w->get<double>();
  return t;
}

}  // namespace

const char* priority_class_name(PriorityClass c) {
  switch (c) {
    case PriorityClass::High: return "high";
    case PriorityClass::Low: return "low";
    default: return "normal";
  }
}

double priority_class_weight(PriorityClass c) {
  switch (c) {
    case PriorityClass::High: return 4.0;
    case PriorityClass::Low: return 0.25;
    default: return 1.0;
  }
}

bool may_use_model(const Tenant& tenant, const std::string& model, const std::vector<std::string>& served_names) {
  if (tenant.may_use_every_model()) return true;
  auto listed = [&](const std::string& name) {
    return std::find(tenant.models.begin(), tenant.models.end(), name) != tenant.models.end();
  };
  const std::string& name = model.empty() && !served_names.empty() ? served_names.front() : model;
  if (listed(name)) return true;
  if (std::find(served_names.begin(), served_names.end(), name) == served_names.end()) return false;
  return std::any_of(served_names.begin(), served_names.end(), listed);
}

Result<std::vector<Tenant>> parse_tenants(std::string_view json_text, const std::string& path) {
  const std::string where = "keys file " + path;
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); what.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
      what = what.substr(pos + 2);
    }
    return Error{where + ": not valid JSON: " + what};
  }
  if (!doc.is_object()) {
    return Error{strprintf("%s: must be a JSON object like {\"keys\": [...]}, got %s", where.c_str(), kind_of(doc))};
  }
  for (const auto& [field, value] : doc.items()) {
    if (field != "keys") {
      return Error{strprintf("%s: unknown top-level field %s; the file holds only \"keys\"", where.c_str(),
                             quote_for_error(field).c_str())};
    }
  }
  const auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) {
    return Error{strprintf("%s: \"keys\" must be an array of {\"name\": ..., \"key\": ...} entries, got %s",
                           where.c_str(), keys == doc.end() ? "nothing" : kind_of(*keys))};
  }
  if (keys->empty()) {
    return Error{where + ": \"keys\" is empty; list at least one key (a server with no keys would need none)"};
  }
  std::vector<Tenant> tenants;
  std::map<std::string, size_t> by_name, by_key;
  for (size_t i = 0; i < keys->size(); ++i) {
    const std::string entry = strprintf("%s: keys[%zu]", where.c_str(), i);
    KAIRO_TRY_ASSIGN(Tenant t, parse_entry((*keys)[i], entry));
    const std::string named = entry + " (" + quote_for_error(t.name) + ")";
    if (auto [it, fresh] = by_name.emplace(t.name, i); !fresh) {
      return Error{strprintf("%s: the name is also keys[%zu]'s; give each key its own name", named.c_str(),
                             it->second)};
    }
    // The error must not print the secret.
    if (auto [it, fresh] = by_key.emplace(t.key, i); !fresh) {
      return Error{strprintf("%s: the key is also keys[%zu]'s (%s); give each name its own key", named.c_str(),
                             it->second, quote_for_error(tenants[it->second].name).c_str())};
    }
    tenants.push_back(std::move(t));
  }
  return tenants;
}

Result<std::vector<Tenant>> load_tenants_file(const std::string& path) {
  auto text = read_text_file(path, size_t{16} << 20);
  if (!text.ok()) return Error{"cannot read the keys file (--api-keys-file): " + text.error().message};
  return parse_tenants(*text, path);
}

}  // namespace kairo::server
