#include "chat/key_decoder.h"

#include "tokenizer/utf8.h"

namespace kairo::tools::chat {
namespace {

// Longer escape sequences than this are not keys: give up on them rather than wait for more bytes forever.
constexpr size_t kMaxSequence = 16;

DecodedKey key(KeyKind kind, size_t n_bytes) { return {Key{kind, {}}, n_bytes}; }

KeyKind control_key(unsigned char c) {
  switch (c) {
    case 0x01: return KeyKind::Home;         // Ctrl-A
    case 0x02: return KeyKind::Left;         // Ctrl-B
    case 0x03: return KeyKind::Interrupt;    // Ctrl-C
    case 0x04: return KeyKind::EndOfInput;   // Ctrl-D
    case 0x05: return KeyKind::End;          // Ctrl-E
    case 0x06: return KeyKind::Right;        // Ctrl-F
    case 0x08: return KeyKind::Backspace;    // Ctrl-H
    case 0x09: return KeyKind::Tab;
    case 0x0A: return KeyKind::Enter;
    case 0x0B: return KeyKind::KillToEnd;    // Ctrl-K
    case 0x0C: return KeyKind::ClearScreen;  // Ctrl-L
    case 0x0D: return KeyKind::Enter;
    case 0x0E: return KeyKind::Down;         // Ctrl-N
    case 0x10: return KeyKind::Up;           // Ctrl-P
    case 0x15: return KeyKind::KillToStart;  // Ctrl-U
    case 0x17: return KeyKind::DeleteWordBefore;  // Ctrl-W
    case 0x7F: return KeyKind::Backspace;
    default: return KeyKind::Ignored;
  }
}

// "ESC [ params final": parameters and intermediates are bytes 0x20..0x3F, the final byte 0x40..0x7E.
DecodedKey decode_csi(std::string_view bytes) {
  size_t end = 2;
  while (end < bytes.size()) {
    const unsigned char c = static_cast<unsigned char>(bytes[end]);
    if (c >= 0x40 && c <= 0x7E) break;
    if (c < 0x20 || c > 0x3F) return key(KeyKind::Ignored, end);  // not a CSI after all: drop what came before
    ++end;
  }
  if (end == bytes.size()) return key(KeyKind::Ignored, end >= kMaxSequence ? end : 0);
  const std::string_view params = bytes.substr(2, end - 2);
  const size_t n = end + 1;
  // xterm adds ";<modifier>" to arrows: 3 is Alt, 5 is Ctrl (both move by words, as in readline).
  const bool word = params == "1;5" || params == "1;3";
  switch (bytes[end]) {
    case 'A': return key(KeyKind::Up, n);
    case 'B': return key(KeyKind::Down, n);
    case 'C': return key(word ? KeyKind::WordRight : KeyKind::Right, n);
    case 'D': return key(word ? KeyKind::WordLeft : KeyKind::Left, n);
    case 'H': return key(KeyKind::Home, n);
    case 'F': return key(KeyKind::End, n);
    case '~':
      if (params == "1" || params == "7") return key(KeyKind::Home, n);
      if (params == "4" || params == "8") return key(KeyKind::End, n);
      if (params == "3") return key(KeyKind::Delete, n);
      if (params == "200") return key(KeyKind::PasteStart, n);
      if (params == "201") return key(KeyKind::PasteEnd, n);
      return key(KeyKind::Ignored, n);
    default: return key(KeyKind::Ignored, n);
  }
}

DecodedKey decode_escape(std::string_view bytes) {
  if (bytes.size() < 2) return key(KeyKind::Ignored, 0);
  switch (bytes[1]) {
    case '[': return decode_csi(bytes);
    case 'O':  // SS3: what some terminals send for arrows and Home/End in application mode
      if (bytes.size() < 3) return key(KeyKind::Ignored, 0);
      switch (bytes[2]) {
        case 'A': return key(KeyKind::Up, 3);
        case 'B': return key(KeyKind::Down, 3);
        case 'C': return key(KeyKind::Right, 3);
        case 'D': return key(KeyKind::Left, 3);
        case 'H': return key(KeyKind::Home, 3);
        case 'F': return key(KeyKind::End, 3);
        default: return key(KeyKind::Ignored, 3);
      }
    case 'b': return key(KeyKind::WordLeft, 2);   // Alt-b
    case 'f': return key(KeyKind::WordRight, 2);  // Alt-f
    case 0x7F: return key(KeyKind::DeleteWordBefore, 2);
    default: return key(KeyKind::Ignored, 2);
  }
}

}  // namespace

DecodedKey decode_key(std::string_view bytes) {
  const unsigned char first = static_cast<unsigned char>(bytes[0]);
  if (first == 0x1B) return decode_escape(bytes);
  if (first < 0x20 || first == 0x7F) return key(control_key(first), 1);
  const tokenizer::Utf8Step step = tokenizer::utf8_step(bytes);
  if (step.kind == tokenizer::Utf8Step::kIncomplete) return key(KeyKind::Ignored, 0);
  const size_t n = step.kind == tokenizer::Utf8Step::kValid ? step.n_bytes : 1;
  return {Key{KeyKind::Text, std::string(bytes.substr(0, n))}, n};
}

}  // namespace kairo::tools::chat
