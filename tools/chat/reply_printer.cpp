#include "chat/reply_printer.h"

#include "chat/terminal_text.h"

namespace kairo::tools::chat {
namespace {

constexpr std::string_view kDim = "\x1b[2m";
constexpr std::string_view kReset = "\x1b[0m";

}  // namespace

ReplyPrinter::ReplyPrinter(std::FILE* out, ReplyStyle style, bool thinking_model, bool opened_in_prompt)
    : out_(out), style_(style) {
  if (thinking_model) splitter_.emplace(opened_in_prompt);
}

void ReplyPrinter::write(std::string_view text) {
  if (text.empty()) return;
  const std::string safe = style_.terminal ? terminal_safe(text) : std::string(text);
  if (safe.empty()) return;
  std::fwrite(safe.data(), 1, safe.size(), out_);
  std::fflush(out_);
  wrote_anything_ = true;
  at_line_start_ = safe.back() == '\n';
}

void ReplyPrinter::print(const server::ReasoningSplitter::Piece& piece) {
  if (!piece.reasoning.empty() && style_.thinking == ThinkingDisplay::Show) {
    if (!thinking_) {
      if (style_.colour) std::fwrite(kDim.data(), 1, kDim.size(), out_);
      write("Thinking...\n");
      thinking_ = true;
    }
    write(piece.reasoning);
  }
  if (!piece.content.empty()) {
    if (thinking_) {
      write(at_line_start_ ? "...done thinking.\n\n" : "\n...done thinking.\n\n");
      if (style_.colour) std::fwrite(kReset.data(), 1, kReset.size(), out_);
      thinking_ = false;
    }
    write(piece.content);
    answer_ += piece.content;
  }
}

void ReplyPrinter::push(std::string_view delta) {
  if (!splitter_) {
    print({{}, std::string(delta)});
    return;
  }
  print(splitter_->push(delta));
}

void ReplyPrinter::finish() {
  if (splitter_) print(splitter_->flush());
  if (thinking_ && style_.colour) {
    std::fwrite(kReset.data(), 1, kReset.size(), out_);
    std::fflush(out_);
  }
  thinking_ = false;
}

}  // namespace kairo::tools::chat
