// Terminal bytes to keys.
#include "chat/key_decoder.h"

#include <gtest/gtest.h>

namespace kairo::tools::chat {
namespace {

KeyKind kind_of(std::string_view bytes) {
  const DecodedKey d = decode_key(bytes);
  EXPECT_EQ(d.n_bytes, bytes.size()) << "the whole sequence is one key";
  return d.key.kind;
}

TEST(KeyDecoder, ControlKeys) {
  EXPECT_EQ(kind_of("\x03"), KeyKind::Interrupt);
  EXPECT_EQ(kind_of("\x04"), KeyKind::EndOfInput);
  EXPECT_EQ(kind_of("\r"), KeyKind::Enter);
  EXPECT_EQ(kind_of("\n"), KeyKind::Enter);
  EXPECT_EQ(kind_of("\x7f"), KeyKind::Backspace);
  EXPECT_EQ(kind_of("\x08"), KeyKind::Backspace);
  EXPECT_EQ(kind_of("\x01"), KeyKind::Home);
  EXPECT_EQ(kind_of("\x05"), KeyKind::End);
  EXPECT_EQ(kind_of("\x0b"), KeyKind::KillToEnd);
  EXPECT_EQ(kind_of("\x15"), KeyKind::KillToStart);
  EXPECT_EQ(kind_of("\x17"), KeyKind::DeleteWordBefore);
  EXPECT_EQ(kind_of("\x0c"), KeyKind::ClearScreen);
  EXPECT_EQ(kind_of("\x10"), KeyKind::Up);
  EXPECT_EQ(kind_of("\x0e"), KeyKind::Down);
  EXPECT_EQ(kind_of("\x07"), KeyKind::Ignored);
}

TEST(KeyDecoder, EscapeSequences) {
  EXPECT_EQ(kind_of("\x1b[A"), KeyKind::Up);
  EXPECT_EQ(kind_of("\x1b[B"), KeyKind::Down);
  EXPECT_EQ(kind_of("\x1b[C"), KeyKind::Right);
  EXPECT_EQ(kind_of("\x1b[D"), KeyKind::Left);
  EXPECT_EQ(kind_of("\x1bOH"), KeyKind::Home);
  EXPECT_EQ(kind_of("\x1b[F"), KeyKind::End);
  EXPECT_EQ(kind_of("\x1b[1~"), KeyKind::Home);
  EXPECT_EQ(kind_of("\x1b[4~"), KeyKind::End);
  EXPECT_EQ(kind_of("\x1b[3~"), KeyKind::Delete);
  EXPECT_EQ(kind_of("\x1b[1;5C"), KeyKind::WordRight);
  EXPECT_EQ(kind_of("\x1b[1;3D"), KeyKind::WordLeft);
  EXPECT_EQ(kind_of("\x1b" "b"), KeyKind::WordLeft);
  EXPECT_EQ(kind_of("\x1b[200~"), KeyKind::PasteStart);
  EXPECT_EQ(kind_of("\x1b[201~"), KeyKind::PasteEnd);
  EXPECT_EQ(kind_of("\x1b[15~"), KeyKind::Ignored);  // F5
}

TEST(KeyDecoder, TextIsOneWholeCharacter) {
  DecodedKey d = decode_key("h\xC3\xA9");
  EXPECT_EQ(d.key.kind, KeyKind::Text);
  EXPECT_EQ(d.key.text, "h");
  EXPECT_EQ(d.n_bytes, 1u);
  d = decode_key("\xC3\xA9!");
  EXPECT_EQ(d.key.text, "\xC3\xA9");
  EXPECT_EQ(d.n_bytes, 2u);
}

TEST(KeyDecoder, AnUnfinishedKeyAsksForMoreBytes) {
  EXPECT_EQ(decode_key("\x1b").n_bytes, 0u);
  EXPECT_EQ(decode_key("\x1b[").n_bytes, 0u);
  EXPECT_EQ(decode_key("\x1b[20").n_bytes, 0u);
  EXPECT_EQ(decode_key("\xF0\x9F").n_bytes, 0u);
}

TEST(KeyDecoder, GivesUpOnAnEndlessSequence) {
  const std::string endless = "\x1b[" + std::string(20, '1');
  EXPECT_EQ(decode_key(endless).key.kind, KeyKind::Ignored);
  EXPECT_EQ(decode_key(endless).n_bytes, endless.size());
}

}  // namespace
}  // namespace kairo::tools::chat
