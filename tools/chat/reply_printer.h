#pragma once
// Prints a reply as it streams. A thinking model's reasoning (`<think>…</think>`, split off by the same
// server::ReasoningSplitter that fills reasoning_content in the API) is shown between "Thinking..." and
// "...done thinking." (dimmed when colours are on, as `ollama run` shows it) or hidden; the answer follows as is.
// The conversation keeps only the answer, as an API client would send it back.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "server/reasoning_splitter.h"

namespace kairo::tools::chat {

enum class ThinkingDisplay { Show, Hide };

struct ReplyStyle {
  bool colour = false;
  bool terminal = false;  // print terminal_safe() text
  ThinkingDisplay thinking = ThinkingDisplay::Show;
};

class ReplyPrinter {
 public:
  // thinking_model: the chat template knows `</think>`; opened_in_prompt: the prompt ends inside `<think>`.
  ReplyPrinter(std::FILE* out, ReplyStyle style, bool thinking_model, bool opened_in_prompt);
  void push(std::string_view delta);
  // The end of the reply: what the splitter held back, and the end of a thinking block the reply never closed.
  void finish();
  const std::string& answer() const { return answer_; }
  bool wrote_anything() const { return wrote_anything_; }
  // The reply so far ends with a newline (or nothing was written): the caller knows where the cursor is.
  bool at_line_start() const { return at_line_start_; }

 private:
  void print(const server::ReasoningSplitter::Piece& piece);
  void write(std::string_view text);

  std::FILE* out_;
  ReplyStyle style_;
  std::optional<server::ReasoningSplitter> splitter_;
  bool thinking_ = false;  // inside the reasoning on screen
  bool wrote_anything_ = false;
  bool at_line_start_ = true;
  std::string answer_;
};

}  // namespace kairo::tools::chat
