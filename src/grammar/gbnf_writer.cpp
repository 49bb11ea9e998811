#include "grammar/gbnf_writer.h"

#include <cassert>

#include "core/format.h"

namespace kairo::grammar {

namespace {

// GBNF rule names are [a-zA-Z0-9_-]; anything else from a schema's property or definition names becomes '-'.
std::string sanitize(std::string_view hint) {
  std::string out;
  for (char c : hint) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    out.push_back(ok ? c : '-');
    if (out.size() >= 40) break;
  }
  if (out.empty() || out == "root") out = "r" + out;
  return out;
}

void append_escaped_codepoint(std::string& out, uint32_t cp) {
  out += cp <= 0xFFFF ? strprintf("\\u%04X", cp) : strprintf("\\U%08X", cp);
}

}  // namespace

std::string GbnfWriter::fresh_name(std::string_view hint) {
  const std::string base = sanitize(hint);
  const int n = hint_uses_[base]++;
  return n == 0 ? base : base + "-" + std::to_string(n);
}

std::string GbnfWriter::add_rule(std::string_view name_hint, const std::string& body) {
  if (auto it = name_of_body_.find(body); it != name_of_body_.end()) return it->second;
  std::string name = fresh_name(name_hint);
  rules_.emplace_back(name, body);
  name_of_body_.emplace(body, name);
  return name;
}

std::string GbnfWriter::reserve(std::string_view name_hint) {
  std::string name = fresh_name(name_hint);
  rules_.emplace_back(name, "");
  return name;
}

void GbnfWriter::define(const std::string& name, const std::string& body) {
  for (auto& [n, b] : rules_) {
    if (n == name) {
      b = body;
      return;
    }
  }
  assert(false && "define() of a name reserve() did not return");
}

std::string GbnfWriter::text(const std::string& root_body) const {
  std::string out = "root ::= " + root_body + "\n";
  for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
  return out;
}

std::string GbnfWriter::literal(std::string_view utf8) {
  std::string out = "\"";
  for (unsigned char c : utf8) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7F) {
      out += strprintf("\\x%02X", c);
    } else {
      out.push_back(static_cast<char>(c));  // UTF-8 passes through: the parser reads code points
    }
  }
  return out + "\"";
}

std::string GbnfWriter::char_class(const std::vector<CodepointRange>& ranges) {
  std::string out = "[";
  for (const auto& r : ranges) {
    append_escaped_codepoint(out, r.lo);
    if (r.hi != r.lo) {
      out.push_back('-');
      append_escaped_codepoint(out, r.hi);
    }
  }
  return out + "]";
}

}  // namespace kairo::grammar
