#pragma once
// GPT-2's byte-level alphabet: every byte is written as one printable code point (printable Latin-1 bytes as
// themselves, the others as U+0100 + n), so BPE vocabularies can hold arbitrary bytes as text ("Ġ" is a space).
#include <cstdint>
#include <string>
#include <string_view>

namespace kairo::tokenizer {

// UTF-8 of the code point that stands for byte b.
const std::string& byte_level_char(uint8_t b);

// Appends the byte-level spelling of raw bytes.
void byte_level_encode(std::string_view raw, std::string& out);

// The raw bytes a byte-level token text stands for. Code points outside the alphabet (added tokens written in plain
// UTF-8) are kept as they are.
std::string byte_level_decode(std::string_view text);

}  // namespace kairo::tokenizer
