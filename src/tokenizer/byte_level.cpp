#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace kairo::tokenizer {
namespace {

struct Tables {
  std::array<std::string, 256> to_char;
  std::array<int16_t, 324> from_cpt;  // code point -> byte, -1 if none; the alphabet lives below U+0144
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    t.from_cpt.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cpt = printable ? b : next++;
      append_utf8(cpt, t.to_char[b]);
      t.from_cpt[cpt] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return t;
}

}  // namespace

const std::string& byte_level_char(uint8_t b) { return tables().to_char[b]; }

void byte_level_encode(std::string_view raw, std::string& out) {
  const Tables& t = tables();
  for (char c : raw) out += t.to_char[static_cast<uint8_t>(c)];
}

std::string byte_level_decode(std::string_view text) {
  const Tables& t = tables();
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step st = utf8_step(text.substr(i));
    if (st.kind == Utf8Step::kValid && st.n_bytes <= 2) {
      const auto b0 = static_cast<uint8_t>(text[i]);
      const uint32_t cpt = st.n_bytes == 1 ? b0 : ((b0 & 0x1Fu) << 6) | (static_cast<uint8_t>(text[i + 1]) & 0x3Fu);
      if (cpt < t.from_cpt.size() && t.from_cpt[cpt] >= 0) {
        out.push_back(static_cast<char>(t.from_cpt[cpt]));
        i += st.n_bytes;
        continue;
      }
    }
    out.append(text.substr(i, st.n_bytes));
    i += st.n_bytes;
  }
  return out;
}

}  // namespace kairo::tokenizer
