#include "grammar/schema_compiler.h"

#include <algorithm>
#include <iterator>

namespace kairo::grammar::schema_detail {

json SchemaCompiler::deref(const json& s, const std::string& ptr) {
  const json* at = &s;
  for (int hops = 0; at->is_object() && at->contains("$ref"); ++hops) {
    if (hops > 32) fail(ptr, "a chain of more than 32 $refs");
    if (!(*at)["$ref"].is_string()) fail(ptr, "'$ref' must be a string");
    at = &resolve((*at)["$ref"].get<std::string>(), ptr);
  }
  return *at;
}

json SchemaCompiler::merge_all_of(const json& s, const std::string& ptr) {
  if (!s["allOf"].is_array() || s["allOf"].empty()) fail(ptr + "/allOf", "allOf must be a non-empty array");
  json merged = s;
  merged.erase("allOf");
  for (size_t i = 0; i < s["allOf"].size(); ++i) {
    const std::string mptr = ptr + "/allOf/" + std::to_string(i);
    const json member = deref(s["allOf"][i], mptr);
    if (member.is_boolean()) {
      if (!member.get<bool>()) fail(mptr, "the schema is `false`, so no value can match it");
      continue;
    }
    if (!member.is_object()) fail(mptr, "a schema must be an object or a boolean");
    for (const auto& [key, value] : member.items()) {
      if (is_annotation(key)) continue;
      if (key == "allOf" || key == "anyOf" || key == "oneOf") {
        fail(mptr, strprintf("%s inside allOf is not supported; flatten the schemas", key.c_str()));
      }
      if (key == "properties") {
        if (!value.is_object()) fail(mptr + "/properties", "'properties' must be an object");
        for (const auto& [name, sub] : value.items()) {
          if (merged["properties"].contains(name) && merged["properties"][name] != sub) {
            fail(mptr + "/properties/" + pointer_token(name),
                 strprintf("allOf members constrain the property '%s' differently; merge them by hand",
                           name.c_str()));
          }
          merged["properties"][name] = sub;
        }
      } else if (key == "required") {
        json req = merged.value("required", json::array());
        for (const auto& r : value) {
          if (std::find(req.begin(), req.end(), r) == req.end()) req.push_back(r);
        }
        merged["required"] = req;
      } else if (merged.contains(key) && merged[key] != value) {
        fail(mptr + "/" + key, strprintf("allOf members give '%s' different values; merge them by hand", key.c_str()));
      } else {
        merged[key] = value;
      }
    }
  }
  return merged;
}

std::set<std::string> SchemaCompiler::value_types(const json& branch, const std::string& ptr) {
  const json s = deref(branch, ptr);
  std::set<std::string> out;
  if (!s.is_object()) return {kTypes.begin(), kTypes.end()};
  std::vector<json> values;
  if (s.contains("const")) values.push_back(s["const"]);
  if (s.contains("enum") && s["enum"].is_array()) values.insert(values.end(), s["enum"].begin(), s["enum"].end());
  if (!values.empty()) {
    for (const auto& v : values) out.insert(type_of_value(v) == "integer" ? "number" : type_of_value(v));
    return out;
  }
  if (s.contains("anyOf") || s.contains("oneOf")) {
    for (const auto& b : s.contains("anyOf") ? s["anyOf"] : s["oneOf"]) {
      const auto t = value_types(b, ptr);
      out.insert(t.begin(), t.end());
    }
    return out;
  }
  const auto types = declared_types(s, ptr);
  if (types.empty()) return {kTypes.begin(), kTypes.end()};
  for (const auto& t : types) out.insert(t == "integer" ? "number" : t);
  return out;
}

std::optional<std::vector<json>> SchemaCompiler::pinned_values(const json& branch, const std::string& name, const std::string& ptr) {
  const json s = deref(branch, ptr);
  if (!s.is_object() || !s.contains("properties") || !s.contains("required")) return std::nullopt;
  const json& req = s["required"];
  if (std::find(req.begin(), req.end(), name) == req.end() || !s["properties"].contains(name)) return std::nullopt;
  const json p = deref(s["properties"][name], ptr);
  if (!p.is_object()) return std::nullopt;
  if (p.contains("const")) return std::vector<json>{p["const"]};
  if (p.contains("enum") && p["enum"].is_array()) return std::vector<json>(p["enum"].begin(), p["enum"].end());
  return std::nullopt;
}

void SchemaCompiler::check_one_of_disjoint(const json& branches, const std::string& ptr) {
  for (size_t i = 0; i < branches.size(); ++i) {
    for (size_t j = i + 1; j < branches.size(); ++j) {
      const auto ti = value_types(branches[i], ptr), tj = value_types(branches[j], ptr);
      std::vector<std::string> common;
      std::set_intersection(ti.begin(), ti.end(), tj.begin(), tj.end(), std::back_inserter(common));
      if (common.empty()) continue;
      bool told_apart = false;
      if (common == std::vector<std::string>{"object"}) {
        const json bi = deref(branches[i], ptr);
        const json props = bi.is_object() ? bi.value("properties", json::object()) : json::object();
        for (const auto& [name, sub] : props.items()) {
          const auto vi = pinned_values(branches[i], name, ptr), vj = pinned_values(branches[j], name, ptr);
          if (!vi || !vj) continue;
          bool overlap = false;
          for (const auto& v : *vi) overlap = overlap || std::find(vj->begin(), vj->end(), v) != vj->end();
          if (!overlap) {
            told_apart = true;
            break;
          }
        }
      }
      // Const/enum-only branches with disjoint values are exclusive too.
      if (!told_apart) {
        const json bi = deref(branches[i], ptr), bj = deref(branches[j], ptr);
        auto vals = [](const json& b) -> std::optional<std::vector<json>> {
          if (!b.is_object()) return std::nullopt;
          if (b.contains("const")) return std::vector<json>{b["const"]};
          if (b.contains("enum") && b["enum"].is_array()) return std::vector<json>(b["enum"].begin(), b["enum"].end());
          return std::nullopt;
        };
        const auto vi = vals(bi), vj = vals(bj);
        if (vi && vj) {
          bool overlap = false;
          for (const auto& v : *vi) overlap = overlap || std::find(vj->begin(), vj->end(), v) != vj->end();
          told_apart = !overlap;
        }
      }
      if (!told_apart) {
        fail(ptr, strprintf("branches %zu and %zu can match the same value, which a grammar cannot rule out for "
                            "oneOf; use anyOf, or tell the branches apart by type or by a required const property",
                            i, j));
      }
    }
  }
}

}  // namespace kairo::grammar::schema_detail
