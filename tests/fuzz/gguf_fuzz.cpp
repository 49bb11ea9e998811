// GGUF reader, buffer path, and everything that reads a parsed file a stranger supplied: metadata getters, the
// model config and weight binding, and the tokenizer built from the file's vocabulary. A file either fails with an
// Error or yields tensors that lie inside the buffer; ASan catches any read outside it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace {

using kairo::gguf::File;

void check_tensors(const File& f, const uint8_t* data, size_t size) {
  volatile uint8_t sink = 0;
  for (const auto& t : f.tensors()) {
    KAIRO_FUZZ_CHECK(!t.dims.empty() && t.dims.size() <= kairo::gguf::kMaxDims, t.name);
    KAIRO_FUZZ_CHECK(t.data >= data && t.data <= data + size, t.name);
    KAIRO_FUZZ_CHECK(t.n_bytes <= static_cast<uint64_t>(data + size - t.data), t.name);
    KAIRO_FUZZ_CHECK(f.find_tensor(t.name) == &t, t.name);
    KAIRO_FUZZ_CHECK(t.n_elements() > 0 && t.n_rows() > 0, t.name);
    if (t.n_bytes > 0) sink = sink + t.data[0] + t.data[t.n_bytes - 1];
  }
}

void check_metadata(const File& f) {
  for (const auto& [key, value] : f.metadata()) {
    KAIRO_FUZZ_CHECK(f.find(key) == &value, key);
    (void)value.to_display();
    (void)f.get_string(key);
    (void)f.get_uint(key);
    (void)f.get_float(key);
    (void)f.get_bool_or(key, false);
  }
}

void check_tokenizer(const File& f) {
  auto tok = kairo::tokenizer::Tokenizer::from_gguf(f);
  if (!tok.ok()) {
    KAIRO_FUZZ_CHECK(!tok.error().message.empty(), "empty tokenizer error");
    return;
  }
  const auto& t = **tok;
  const int32_t n = t.n_vocab();
  KAIRO_FUZZ_CHECK(n > 0, "tokenizer with no tokens");
  for (int32_t id : {t.bos_id(), t.eos_id(), t.eot_id(), t.eom_id(), t.unk_id()}) {
    KAIRO_FUZZ_CHECK(id == kairo::tokenizer::kNoToken || (id >= 0 && id < n), std::to_string(id));
  }
  for (bool special : {false, true}) {
    const auto ids = t.encode("Hello, world! <s> \xE2\x96\x81\xC3\xA9 \xFF 123", true, special);
    for (int32_t id : ids) KAIRO_FUZZ_CHECK(id >= 0 && id < n, std::to_string(id));
    (void)t.decode(ids, special);
    (void)t.detokenize(ids);
  }
  // Every piece of a small vocabulary, plus ids just outside it.
  std::vector<int32_t> all;
  for (int32_t id = -2; id < std::min(n, 512) + 2; ++id) all.push_back(id);
  kairo::tokenizer::IncrementalDecoder dec(t);
  for (int32_t id : all) (void)dec.push(id);
  (void)dec.flush();
  (void)t.detokenize(all, {true, true});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = File::parse(data, size, "fuzz.gguf");
  if (!f.ok()) {
    // Every parse error is located: "<name>: offset N: what".
    KAIRO_FUZZ_CHECK(f.error().message.rfind("fuzz.gguf: offset ", 0) == 0, f.error().message);
    return 0;
  }
  KAIRO_FUZZ_CHECK(f->data_offset() % f->alignment() == 0, "data offset not aligned");
  check_tensors(*f, data, size);
  check_metadata(*f);
  if (kairo::model::read_config(*f).ok()) (void)kairo::model::Model::from_file(*f);
  check_tokenizer(*f);
  return 0;
}
