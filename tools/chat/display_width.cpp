#include "chat/display_width.h"

#include "tokenizer/utf8.h"

namespace kairo::tools::chat {
namespace {

struct Range {
  uint32_t first, last;
};

bool in(const Range* ranges, size_t n, uint32_t cp) {
  for (size_t i = 0; i < n; ++i) {
    if (cp >= ranges[i].first && cp <= ranges[i].last) return true;
  }
  return false;
}

// The common blocks only: a rare character measured wrong misplaces the cursor on that line, nothing worse.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x200B, 0x200F}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
    {0xFE20, 0xFE2F}, {0x1F3FB, 0x1F3FF}, {0xE0100, 0xE01EF},
};
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},
    {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

uint32_t decode(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  switch (s.size()) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

}  // namespace

int codepoint_columns(uint32_t cp) {
  if (in(kZeroWidth, std::size(kZeroWidth), cp)) return 0;
  if (in(kWide, std::size(kWide), cp)) return 2;
  return 1;
}

size_t text_columns(std::string_view text) {
  size_t columns = 0;
  while (!text.empty()) {
    const tokenizer::Utf8Step step = tokenizer::utf8_step(text);
    const size_t n = step.n_bytes == 0 ? 1 : step.n_bytes;
    columns += step.kind == tokenizer::Utf8Step::kValid ? codepoint_columns(decode(text.substr(0, n))) : 1;
    text.remove_prefix(n);
  }
  return columns;
}

}  // namespace kairo::tools::chat
