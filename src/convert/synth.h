#pragma once
// `kairo synth`: a random-weight GGUF of a real model's shape, for speed work. Weights do not change how fast a model
// runs, so a seeded random model of TinyLlama's or Llama-3-8B's shape is a fair benchmark without downloading
// anything (vLLM's --load-format dummy idea). The tokenizer is copied from a real GGUF so the file also runs through
// `kairo run`, the engine and the server.
//
// Deterministic: every weight row is drawn from a counter-based generator keyed by (seed, tensor name, row), so the
// same options give the same bytes whatever the thread count, and the F32 file quantized by `kairo quantize` is
// byte-identical to the file synthesized directly in that type.
#include <cstdint>
#include <functional>
#include <string>

#include "convert/quant_scheme.h"
#include "core/result.h"
#include "core/thread_pool.h"
#include "model/config.h"

namespace kairo::convert {

struct SynthOptions {
  // The shape: arch (llama, qwen2, qwen3, qwen3moe), dims, heads, ffn, context, rope, tied embeddings, experts
  // (the arch's fixed traits, QKV bias or Q/K norm, come from model::apply_arch_traits).
  // n_vocab is the embedding's row count; a tokenizer with more tokens widens it (see below).
  model::ModelConfig config;
  std::string preset;             // recorded in the file (kairo.synth.preset) and its name; may be empty
  QuantScheme scheme{"F16", FileType::F16, DType::F16};
  bool pure = false;              // see choose_tensor_types
  uint64_t seed = 0;
  float init_std = 0.02f;         // weights ~ N(0, init_std^2); norm weights are 1
  // GGUF whose tokenizer.* metadata is copied; empty: the file gets no tokenizer. A tokenizer with fewer tokens than
  // n_vocab is padded with unused tokens "<dummy_N>" so the output layer keeps the real shape; one with more tokens
  // sets n_vocab to its size (a vocabulary cannot be cut without breaking its merges and special ids).
  std::string tokenizer_path;
};

struct SynthReport {
  int n_vocab = 0;              // embedding rows written
  int n_tokenizer_tokens = 0;   // tokens in the copied tokenizer (0: none)
  int n_dummy_tokens = 0;       // padding added to the tokenizer
  uint64_t n_params = 0;
  uint64_t n_bytes = 0;         // file size
};

// on_tensor(name, type, index, count) before each tensor is written (progress output).
using SynthProgress = std::function<void(const std::string&, DType, size_t, size_t)>;

// Validates the shape (the same checks the model loader applies) and writes the file.
Result<SynthReport> write_synth_model(const SynthOptions& options, const std::string& out_path, ThreadPool& pool,
                                      const SynthProgress& on_tensor = {});

}  // namespace kairo::convert
