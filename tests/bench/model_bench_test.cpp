// bench/model_bench and bench/batch_bench on the shared 2-layer synthetic models.
#include "bench/model_bench.h"

#include <gtest/gtest.h>

#include "bench/batch_bench.h"
#include "test_paths.h"

namespace kairo::bench {
namespace {

constexpr uint64_t kQ4K = 144, kQ6K = 210;  // bytes per 256-element block

TEST(ModelCost, CountsStoredBytesOfEveryMatmulAndOneEmbeddingRow) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q4_K_M.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  const ModelCost c = model_cost((*m)->file(), (*m)->config());
  // dim 256, q 256, kv 64, ffn 768, vocab 512. llama-quantize put blk.1's attn_v and ffn_down and the output in Q6_K.
  const uint64_t q = 256 * 256, kv = 64 * 256, ffn = 768 * 256, out = 512 * 256;
  const uint64_t blk0 = (2 * q + 2 * kv + 3 * ffn) / 256 * kQ4K;
  const uint64_t blk1 = (2 * q + kv + 2 * ffn) / 256 * kQ4K + (kv + ffn) / 256 * kQ6K;
  EXPECT_EQ(c.decode_bytes_per_token, blk0 + blk1 + out / 256 * kQ6K + 256 / 256 * kQ4K);
  EXPECT_EQ(c.layer_matmul_params, 2 * (2 * q + 2 * kv + 3 * ffn));
  EXPECT_EQ(c.output_params, out);
}

TEST(ModelCost, TiedEmbeddingsCountAsTheOutputProjection) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.f16.gguf"));
  ASSERT_TRUE(m.ok());
  model::ModelConfig tied = (*m)->config();
  tied.tied_embeddings = true;
  // Same file read as if output.weight were absent: only token_embd's part changes meaning, so compare the deltas.
  const ModelCost untied = model_cost((*m)->file(), (*m)->config());
  const ModelCost as_tied = model_cost((*m)->file(), tied);
  EXPECT_EQ(as_tied.decode_bytes_per_token - untied.decode_bytes_per_token, 512u * 256 * 2);
  EXPECT_EQ(as_tied.output_params - untied.output_params, 512u * 256);
}

TEST(ModelBench, RunsEachTestTheRequestedTimes) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
  ASSERT_TRUE(m.ok());
  ThreadPool pool(2);
  ModelBenchOptions o;
  o.n_prompt = {24};
  o.n_gen = {0, 6};
  o.n_batch = 10;  // 3 chunks: 10 + 10 + 4
  o.n_reps = 2;
  auto r = run_model_bench(**m, o, pool);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tests.size(), 3u);  // pp24 under each numerics, then tg6
  EXPECT_EQ(r->tests[0].name, "pp24 relaxed");
  EXPECT_EQ(r->tests[1].name, "pp24 exact");
  for (int i : {0, 1}) {
    EXPECT_EQ(r->tests[i].seconds.size(), 2u);
    EXPECT_DOUBLE_EQ(r->tests[i].ops, 2.0 * (r->cost.layer_matmul_params * 24.0 + r->cost.output_params * 3.0));
  }
  EXPECT_EQ(r->tests[2].name, "tg6");
  EXPECT_DOUBLE_EQ(r->tests[2].bytes, 6.0 * r->cost.decode_bytes_per_token);
  for (const auto& t : r->tests) EXPECT_GT(t.avg_tps, 0.0) << t.name;
}

TEST(ModelBench, RefusesNonsense) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"));
  ASSERT_TRUE(m.ok());
  ThreadPool pool(1);
  ModelBenchOptions o;
  o.n_reps = 0;
  EXPECT_EQ(run_model_bench(**m, o, pool).error().message, "--batch and --reps must be positive");
  o = ModelBenchOptions{};
  o.n_gen = {-1};
  EXPECT_EQ(run_model_bench(**m, o, pool).error().message, "--pp and --tg must be >= 0");
}

TEST(BatchBench, EverySequenceGeneratesItsTokens) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q4_0.gguf"));
  ASSERT_TRUE(m.ok());
  auto tok = tokenizer::Tokenizer::from_gguf((*m)->file());
  ASSERT_TRUE(tok.ok());
  BatchBenchOptions o;
  o.n_seqs = {1, 3};
  o.n_prompt = 6;
  o.n_gen = 4;
  o.n_threads = 2;
  int n_rows_seen = 0;
  auto rows = run_batch_bench(**m, **tok, o, [&](const BatchBenchRow&) { ++n_rows_seen; });
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(n_rows_seen, 2);
  EXPECT_EQ((*rows)[1].n_seqs, 3);
  EXPECT_EQ((*rows)[1].total_tokens, 3 * 4);
  // The generation phase begins with the last sequence's first token, so it holds that sequence's other 3 tokens
  // at least, and at most every sequence's.
  EXPECT_GE((*rows)[1].gen_tokens, 3);
  EXPECT_LE((*rows)[1].gen_tokens, 3 * 3);
  EXPECT_DOUBLE_EQ((*rows)[1].total_tps, 3.0 * 10 / (*rows)[1].total_seconds);
}

TEST(BatchBench, RefusesSequencesLongerThanTheContext) {
  auto m = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q4_0.gguf"));
  ASSERT_TRUE(m.ok());
  auto tok = tokenizer::Tokenizer::from_gguf((*m)->file());
  BatchBenchOptions o;
  o.n_prompt = 500;
  o.n_gen = 20;
  EXPECT_EQ(run_batch_bench(**m, **tok, o).error().message,
            "--prompt 500 + --gen 20 exceed the model's context of 512 tokens");
}

}  // namespace
}  // namespace kairo::bench
