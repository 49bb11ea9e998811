#pragma once
// Separates a thinking model's reasoning from its answer while the reply streams (DeepSeek-R1, Qwen3 and their
// kin: `<think>…</think>` then the answer). Text inside the block goes to `reasoning`, the rest to `content`;
// neither marker is ever returned. A marker cut across deltas (`</thi` + `nk>`) is held back until it is whole or
// can no longer be one, so concatenating the pieces gives exactly the text without the markers.
//   - The reply starts with the block when its first non-blank text is `<think>`; otherwise it has none and all of
//     it is content.
//   - The template may open the block itself (Qwen3 and R1 prompts end with `<think>\n`): the reply then starts
//     inside it (opened_in_prompt).
//   - Blank text right after `</think>` is dropped (the answer's own text starts at its first non-blank character).
//   - A reply that ends inside the block (max_tokens) is all reasoning.
#include <string>
#include <string_view>

namespace kairo::server {

class ReasoningSplitter {
 public:
  explicit ReasoningSplitter(bool opened_in_prompt);

  struct Piece {
    std::string reasoning;
    std::string content;
  };
  Piece push(std::string_view text);
  // The end of the reply: what was held back goes where it belongs.
  Piece flush();

 private:
  enum class State { Undecided, Thinking, AfterBlock, NoBlock };
  void emit(std::string_view text, Piece& out);

  State state_;
  bool skip_blank_ = false;  // right after </think>
  std::string held_;         // a possible marker (or leading blanks) not yet decided
};

}  // namespace kairo::server
