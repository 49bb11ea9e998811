#include "chat/message_assembler.h"

namespace kairo::tools::chat {
namespace {

constexpr std::string_view kFence = R"(""")";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

void MessageAssembler::reset() {
  lines_.clear();
  in_block_ = false;
}

Message MessageAssembler::finish() {
  Message m;
  m.literal = in_block_;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (i > 0) m.text += '\n';
    m.text += lines_[i];
  }
  reset();
  return m;
}

std::optional<Message> MessageAssembler::add(std::string_view line, bool continues) {
  if (in_block_) {
    if (!ends_with(line, kFence)) {
      lines_.emplace_back(line);
      return std::nullopt;
    }
    line.remove_suffix(kFence.size());
    if (!line.empty()) lines_.emplace_back(line);
    return finish();
  }
  if (lines_.empty() && starts_with(line, kFence)) {
    line.remove_prefix(kFence.size());
    in_block_ = true;
    if (line.size() >= kFence.size() && ends_with(line, kFence)) {  // """one line"""
      line.remove_suffix(kFence.size());
      lines_.emplace_back(line);
      return finish();
    }
    if (!line.empty()) lines_.emplace_back(line);
    return std::nullopt;
  }
  if (continues) {
    lines_.emplace_back(line);
    return std::nullopt;
  }
  if (ends_with(line, "\\")) {
    line.remove_suffix(1);
    lines_.emplace_back(line);
    return std::nullopt;
  }
  lines_.emplace_back(line);
  return finish();
}

}  // namespace kairo::tools::chat
