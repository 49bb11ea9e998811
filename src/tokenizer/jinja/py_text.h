#pragma once
// Python's text conventions, reproduced exactly because chat templates print through them: float repr,
// string repr, json.dumps (as Hugging Face's `tojson` calls it), str.isspace, and code-point indexing of UTF-8.
#include <cstdint>
#include <string>
#include <vector>

namespace kairo::jinja {

class Value;

// repr(float): shortest round-trip digits, exponent form outside 1e-4 <= |x| < 1e16, "inf"/"nan".
std::string py_float_repr(double x);
// repr(str): single quotes unless the text has ' and no ".
std::string py_str_repr(const std::string& s);

struct JsonDumpOptions {
  bool has_indent = false;
  std::string indent;                 // indent unit when has_indent
  std::string item_separator = ", ";  // json.dumps defaults: ", " without indent, "," with
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...). Throws TemplateError for values JSON cannot hold (Undefined, callables).
std::string py_json_dumps(const Value& v, const JsonDumpOptions& opt);

// UTF-8 <-> code points. Invalid bytes decode as U+FFFD-free raw code points 0xDC80+byte (like Python's
// surrogateescape) so that slicing and re-encoding never loses or invents bytes.
std::vector<uint32_t> utf8_decode(const std::string& s);
std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin = 0, size_t end = SIZE_MAX);
void utf8_append(std::string& out, uint32_t cp);
bool is_ascii(const std::string& s);

bool py_isspace(uint32_t cp);
// Simple one-to-one case mappings for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
uint32_t py_upper(uint32_t cp);
uint32_t py_lower(uint32_t cp);
bool py_isalpha_cased(uint32_t cp);  // has a case (used by str.title / capitalize)

std::string str_upper(const std::string& s);
std::string str_lower(const std::string& s);
// Python str.strip/lstrip/rstrip; with chars == nullptr strips whitespace.
std::string str_strip(const std::string& s, const std::string* chars, bool left, bool right);

}  // namespace kairo::jinja
