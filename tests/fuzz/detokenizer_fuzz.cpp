// Detokenizer: token_to_piece, decode, detokenize and the streaming IncrementalDecoder over arbitrary id sequences,
// including negative and out-of-range ids (a client can send any ids to /detokenize or as a prompt).
//
// Input: byte 0 picks the tokenizer, byte 1 the flags, then little-endian u32 ids (most near the vocab size so
// real pieces dominate, some raw). Invariant: what IncrementalDecoder streams is valid UTF-8, and for in-range ids
// it is the decode() bytes with invalid sequences replaced.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using kairo::tokenizer::Tokenizer;

std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<Tokenizer>> all = [] {
    std::vector<std::unique_ptr<Tokenizer>> v;
    const std::string paths[] = {
        kairo::fuzz::shared_path("vocab/ggml-vocab-llama-spm.gguf"),
        kairo::fuzz::shared_path("vocab/ggml-vocab-gpt-2.gguf"),
        kairo::fuzz::shared_path("vocab/ggml-vocab-phi-3.gguf"),
        kairo::fuzz::shared_path("vocab/ggml-vocab-deepseek-llm.gguf"),
        kairo::fuzz::source_path("models/aidreams260K.gguf"),
    };
    for (const std::string& p : paths) {
      auto f = kairo::gguf::File::open(p);
      if (!f.ok()) kairo::fuzz::setup_failed(f.error().message);
      auto tok = Tokenizer::from_gguf(*f);
      if (!tok.ok()) kairo::fuzz::setup_failed(tok.error().message);
      v.push_back(std::move(tok.value()));
    }
    return v;
  }();
  return all;
}

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto d = static_cast<uint8_t>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kairo::fuzz::Input in(data, size);
  const Tokenizer& t = *tokenizers()[in.byte() % tokenizers().size()];
  const uint8_t flags = in.byte();
  const bool render_special = flags & 1;
  std::vector<int32_t> ids;
  bool all_valid = true;
  while (in.remaining() > 0) {
    const uint32_t raw = in.u32();
    // Mostly ids inside (or just outside) the vocab, sometimes the raw value (negative, huge).
    const int32_t id = (raw >> 31) ? static_cast<int32_t>(raw) : static_cast<int32_t>(raw % (t.n_vocab() + 3));
    all_valid = all_valid && id >= 0 && id < t.n_vocab();
    ids.push_back(id);
  }
  KAIRO_FUZZ_CHECK(t.check_ids(ids).ok() == all_valid, "check_ids disagrees with the vocab size");

  std::string pieces;
  for (int32_t id : ids) pieces += t.token_to_piece(id, render_special);
  const std::string decoded = t.decode(ids, render_special);
  KAIRO_FUZZ_CHECK(decoded == pieces, "decode != concatenated pieces");
  (void)t.detokenize(ids, {(flags & 2) != 0, render_special});

  kairo::tokenizer::IncrementalDecoder dec(t, render_special, (flags & 4) != 0);
  std::string streamed;
  for (int32_t id : ids) {
    const std::string s = dec.push(id);
    streamed += s;
    KAIRO_FUZZ_CHECK(dec.n_pending_bytes() <= 4, "decoder holds more than one partial character");
  }
  streamed += dec.flush();
  KAIRO_FUZZ_CHECK(dec.n_pending_bytes() == 0, "bytes left after flush");
  KAIRO_FUZZ_CHECK(valid_utf8(streamed), "IncrementalDecoder produced invalid UTF-8");
  if (valid_utf8(decoded) && !(flags & 4)) {
    KAIRO_FUZZ_CHECK(streamed == decoded, "stream differs from decode() on valid UTF-8");
  }
  return 0;
}
