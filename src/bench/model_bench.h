#pragma once
// `kairo bench model`: llama-bench's two tests on one model. Prefill (pp N) runs N prompt tokens through the model in
// batches of n_batch tokens; decode (tg N) runs N single-token steps. Each starts from an empty KV cache and is
// repeated. The figures are stated in hardware terms: decode as the weight bytes it streams per second (compare
// with the read bandwidth), prefill as matmul operations per second (compare with the int8 dot throughput).
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/model.h"

namespace kairo::bench {

// What a token costs, from the file's tensor table (stored bytes, so quantized blocks count at their real size).
struct ModelCost {
  // Every matmul weight a token reads (the output projection included; of a mixture of experts, the router and the
  // expert_used_count chosen experts) + one embedding row.
  uint64_t decode_bytes_per_token = 0;
  uint64_t layer_matmul_params = 0;     // multiply-adds per token in the blocks' matmuls (chosen experts only)
  uint64_t output_params = 0;           // multiply-adds per logits row (n_vocab x dim)
  uint64_t weight_bytes = 0;            // every tensor of the file
};
ModelCost model_cost(const gguf::File& file, const model::ModelConfig& config);

struct ModelBenchOptions {
  std::vector<int> n_prompt{512};  // one pp test per entry (0: none)
  std::vector<int> n_gen{128};     // one tg test per entry (0: none)
  int n_batch = 512;               // prompt tokens per forward step
  int n_reps = 3;
  DType kv_dtype = DType::F16;
  uint64_t seed = 42;              // random token ids
  // One run of each pp test per entry: Relaxed is what a sampled request's prompt gets, Exact a temperature-0
  // one's (kernels::Numerics). Decode steps are one token, where both are the same kernels.
  std::vector<kernels::Numerics> prefill_numerics{kernels::Numerics::Relaxed, kernels::Numerics::Exact};
};

struct ModelBenchTest {
  std::string name;                // "pp512 relaxed", "pp512 exact", "tg128"
  int n_prompt = 0;
  int n_gen = 0;
  std::vector<double> seconds;     // one per repetition
  double avg_tps = 0;              // mean over repetitions of tokens / second
  double stddev_tps = 0;
  double ops = 0;                  // matmul operations (2 x multiply-adds) of one repetition
  double bytes = 0;                // weight bytes streamed by one repetition (decode: per token x tokens)
};

struct ModelBenchResult {
  ModelCost cost;
  std::vector<ModelBenchTest> tests;
};

// Runs the tests (after one warm-up step of each kind, which also faults in the mapped weights).
Result<ModelBenchResult> run_model_bench(model::Model& model, const ModelBenchOptions& options, ThreadPool& pool);

}  // namespace kairo::bench
