#pragma once
// Small base models for the adapter tests: a 2-layer llama of dim 64 (rows split into every block type) with the demo
// tokenizer, written by `kairo synth`'s code in any weight scheme, and its one-step logits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "convert/convert_test_util.h"
#include "convert/synth.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::convert::testing {

inline SynthOptions small_base_options(const std::string& scheme, int dim = 64, int ffn = 96) {
  SynthOptions o;
  model::ModelConfig& c = o.config;
  c.arch = "llama";
  c.n_layers = 2;
  c.dim = dim;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = dim / 2;
  c.ffn_dim = ffn;
  c.n_vocab = 600;
  c.context_length = 64;
  c.rope.freq_base = 10000.0f;
  o.scheme = *parse_quant_scheme(scheme);
  o.pure = true;  // every matrix in the scheme's type
  o.seed = 11;
  o.tokenizer_path = kairo::testing::demo_model_path();
  return o;
}

inline std::string write_small_base(const std::string& scheme, const std::string& name) {
  const std::string path = temp_path(name);
  ThreadPool pool(2);
  auto r = write_synth_model(small_base_options(scheme), path, pool);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

// The logits of the last of 5 prompt tokens.
inline std::vector<float> last_logits(const std::string& model_path) {
  auto m = model::Model::load(model_path);
  EXPECT_TRUE(m.ok()) << m.error().message;
  if (!m.ok()) return {};
  auto kv = model::KvStorage::create((*m)->shared_device(), (*m)->config(), 4, 16, DType::F16);
  EXPECT_TRUE(kv.ok());
  model::Batch b;
  for (int p = 0; p < 5; ++p) {
    b.token_ids.push_back(10 + 7 * p);
    b.positions.push_back(p);
    b.seq_idx.push_back(0);
    b.slot_mapping.push_back(p);
  }
  b.block_tables = {0, 1, 2, 3};
  b.max_blocks_per_seq = 4;
  b.logits_rows = {4};
  std::vector<float> logits;
  ThreadPool pool(2);
  model::StepBuffers buffers((*m)->shared_device());
  (*m)->forward(b, *kv, buffers, logits, pool);
  return logits;
}

}  // namespace kairo::convert::testing
