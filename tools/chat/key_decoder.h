#pragma once
// Turns the bytes a terminal sends into the keys the line editor acts on: control characters (Ctrl-A ... Ctrl-W),
// ANSI escape sequences (arrows, Home/End/Delete, Ctrl- and Alt-arrows in xterm's encoding) and the markers of a
// bracketed paste. Pure: the editor feeds it what it has read and learns how many bytes made the key.
#include <cstddef>
#include <string>
#include <string_view>

namespace kairo::tools::chat {

enum class KeyKind {
  Text,              // one character (a whole UTF-8 sequence, or one stray byte) in Key::text
  Enter,
  Tab,
  Backspace,
  Delete,
  Left,
  Right,
  WordLeft,
  WordRight,
  Home,
  End,
  Up,
  Down,
  KillToEnd,         // Ctrl-K
  KillToStart,       // Ctrl-U
  DeleteWordBefore,  // Ctrl-W, Alt-Backspace
  ClearScreen,       // Ctrl-L
  Interrupt,         // Ctrl-C
  EndOfInput,        // Ctrl-D
  PasteStart,        // ESC [ 200 ~
  PasteEnd,          // ESC [ 201 ~
  Ignored,           // a control or escape sequence the editor has no use for
};

struct Key {
  KeyKind kind = KeyKind::Ignored;
  std::string text;  // KeyKind::Text only
};

struct DecodedKey {
  Key key;
  size_t n_bytes = 0;  // bytes the key took; 0: `bytes` ends in the middle of a key (read more, or give up on it)
};

// The first key in `bytes` (non-empty).
DecodedKey decode_key(std::string_view bytes);

}  // namespace kairo::tools::chat
