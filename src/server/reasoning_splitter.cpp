#include "server/reasoning_splitter.h"

#include <algorithm>

#include "server/text_markers.h"

namespace kairo::server {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

}  // namespace

ReasoningSplitter::ReasoningSplitter(bool opened_in_prompt)
    : state_(opened_in_prompt ? State::Thinking : State::Undecided) {}

void ReasoningSplitter::emit(std::string_view text, Piece& out) {
  while (!text.empty()) {
    switch (state_) {
      case State::Undecided: {
        // Leading blanks, then either `<think>` (a block) or anything else (none).
        size_t i = 0;
        while (i < text.size() && is_blank(text[i])) ++i;
        const std::string_view rest = text.substr(i);
        if (rest.empty()) {
          held_.append(text);
          return;
        }
        if (rest.size() >= kOpen.size() ? rest.substr(0, kOpen.size()) == kOpen : kOpen.substr(0, rest.size()) == rest) {
          if (rest.size() < kOpen.size()) {  // a prefix of the marker so far
            held_.append(text);
            return;
          }
          held_.clear();  // the blanks before the block are dropped with the marker
          state_ = State::Thinking;
          text = rest.substr(kOpen.size());
          continue;
        }
        state_ = State::NoBlock;
        out.content += held_;
        held_.clear();
        continue;
      }
      case State::Thinking: {
        const size_t close = text.find(kClose);
        if (close != std::string_view::npos) {
          out.reasoning.append(text.substr(0, close));
          state_ = State::AfterBlock;
          skip_blank_ = true;
          text = text.substr(close + kClose.size());
          continue;
        }
        const size_t keep = partial_marker_suffix(text, kClose);
        out.reasoning.append(text.substr(0, text.size() - keep));
        held_.assign(text.substr(text.size() - keep));
        return;
      }
      case State::AfterBlock: {
        if (skip_blank_) {
          size_t i = 0;
          while (i < text.size() && is_blank(text[i])) ++i;
          text = text.substr(i);
          if (text.empty()) return;
          skip_blank_ = false;
        }
        out.content.append(text);
        return;
      }
      case State::NoBlock:
        out.content.append(text);
        return;
    }
  }
}

ReasoningSplitter::Piece ReasoningSplitter::push(std::string_view text) {
  Piece out;
  // What was held back (at most a marker's length, or leading blanks) is read again with the new text.
  std::string joined = std::move(held_);
  held_.clear();
  joined.append(text);
  emit(joined, out);
  return out;
}

ReasoningSplitter::Piece ReasoningSplitter::flush() {
  Piece out;
  // Ended inside the block: what is held is reasoning; otherwise it is text (blanks, half a `<think>`).
  (state_ == State::Thinking ? out.reasoning : out.content) = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace kairo::server
