#include "tokenizer/utf8.h"

namespace kairo::tokenizer {

Utf8Step utf8_step(std::string_view s) {
  const auto b0 = static_cast<uint8_t>(s[0]);
  if (b0 < 0x80) return {Utf8Step::kValid, 1};
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (excludes overlongs and surrogates)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {Utf8Step::kInvalid, 1};
  }
  for (size_t i = 1; i <= need; ++i) {
    if (i >= s.size()) return {Utf8Step::kIncomplete, i};
    const auto b = static_cast<uint8_t>(s[i]);
    const uint8_t l = i == 1 ? lo : 0x80;
    const uint8_t h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) return {Utf8Step::kInvalid, i};
  }
  return {Utf8Step::kValid, need + 1};
}

void append_utf8_sanitized(std::string_view s, std::string& out) {
  size_t i = 0;
  while (i < s.size()) {
    const Utf8Step st = utf8_step(s.substr(i));
    if (st.kind == Utf8Step::kValid) {
      out.append(s.data() + i, st.n_bytes);
    } else {
      out.append(kReplacementChar);
    }
    i += st.n_bytes;
  }
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const Utf8Step st = utf8_step(s.substr(i));
    if (st.kind != Utf8Step::kValid) return false;
    i += st.n_bytes;
  }
  return true;
}

void append_utf8(uint32_t cpt, std::string& out) {
  if (cpt < 0x80) {
    out.push_back(static_cast<char>(cpt));
  } else if (cpt < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cpt >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  }
}

}  // namespace kairo::tokenizer
