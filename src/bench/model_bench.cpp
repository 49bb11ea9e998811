#include "bench/model_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "core/format.h"

namespace kairo::bench {
namespace {

constexpr int kBlockSize = 16;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Tokens [begin, end) of one sequence at positions begin.., with logits for the last one (as llama-bench asks).
void fill_batch(model::Batch& b, const std::vector<int32_t>& tokens, int begin, int end, int n_blocks) {
  b.clear();
  b.max_blocks_per_seq = n_blocks;
  b.block_tables.resize(static_cast<size_t>(n_blocks));
  for (int i = 0; i < n_blocks; ++i) b.block_tables[static_cast<size_t>(i)] = i;
  for (int p = begin; p < end; ++p) {
    b.token_ids.push_back(tokens[static_cast<size_t>(p)]);
    b.positions.push_back(p);
    b.seq_idx.push_back(0);
    b.slot_mapping.push_back(p);
  }
  b.logits_rows.push_back(end - begin - 1);
}

void summarize(ModelBenchTest& t, int n_tokens) {
  double sum = 0, sum_sq = 0;
  for (double s : t.seconds) {
    const double tps = n_tokens / s;
    sum += tps;
    sum_sq += tps * tps;
  }
  const double n = static_cast<double>(t.seconds.size());
  t.avg_tps = sum / n;
  t.stddev_tps = n > 1 ? std::sqrt(std::max(0.0, (sum_sq - sum * sum / n) / (n - 1))) : 0.0;
}

}  // namespace

ModelCost model_cost(const gguf::File& file, const model::ModelConfig& config) {
  ModelCost c;
  const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
  for (const auto& t : file.tensors()) {
    c.weight_bytes += t.n_bytes;
    if (t.dims.size() < 2 || t.name == "token_embd.weight") continue;
    uint64_t params = static_cast<uint64_t>(t.n_elements());
    uint64_t bytes = t.n_bytes;
    if (t.dims.size() == 3 && config.moe()) {  // an expert stack: a token reads only its chosen experts
      params = params / static_cast<uint64_t>(config.n_experts) * static_cast<uint64_t>(config.n_experts_used);
      bytes = bytes / static_cast<uint64_t>(config.n_experts) * static_cast<uint64_t>(config.n_experts_used);
    }
    c.decode_bytes_per_token += bytes;
    if (t.name == "output.weight") {
      c.output_params += params;
    } else {
      c.layer_matmul_params += params;
    }
  }
  if (embd && embd->dims.size() == 2 && embd->dims[1] > 0) {
    c.decode_bytes_per_token += embd->n_bytes / static_cast<uint64_t>(embd->dims[1]);  // one row per token
    if (config.tied_embeddings) {  // the embedding doubles as the output projection
      c.decode_bytes_per_token += embd->n_bytes;
      c.output_params += static_cast<uint64_t>(embd->n_elements());
    }
  }
  return c;
}

Result<ModelBenchResult> run_model_bench(model::Model& model, const ModelBenchOptions& o, ThreadPool& pool) {
  const model::ModelConfig& c = model.config();
  if (o.n_batch <= 0 || o.n_reps <= 0) return Error{"--batch and --reps must be positive"};
  int max_tokens = 1;
  for (int n : o.n_prompt) max_tokens = std::max(max_tokens, n);
  for (int n : o.n_gen) max_tokens = std::max(max_tokens, n);
  for (const auto* list : {&o.n_prompt, &o.n_gen}) {
    for (int n : *list) {
      if (n < 0) return Error{"--pp and --tg must be >= 0"};
    }
  }
  if (max_tokens > c.context_length) {
    return Error{strprintf("a test of %d tokens does not fit the model's context of %d tokens; lower --pp/--tg",
                           max_tokens, c.context_length)};
  }
  const int n_blocks = (max_tokens + kBlockSize - 1) / kBlockSize;
  KAIRO_TRY_ASSIGN(model::KvStorage kv, model::KvStorage::create(model.shared_device(), c, n_blocks, kBlockSize, o.kv_dtype));

  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<int32_t> pick(0, c.n_vocab - 1);
  std::vector<int32_t> tokens(static_cast<size_t>(max_tokens));
  for (auto& t : tokens) t = pick(rng);

  ModelBenchResult result;
  result.cost = model_cost(model.file(), c);
  model::Batch batch;
  model::StepBuffers buffers(model.shared_device());
  std::vector<float> logits;

  auto prefill = [&](int n, kernels::Numerics numerics) {
    for (int begin = 0; begin < n; begin += o.n_batch) {
      fill_batch(batch, tokens, begin, std::min(n, begin + o.n_batch), n_blocks);
      batch.numerics = numerics;
      model.forward(batch, kv, buffers, logits, pool);
    }
  };
  auto decode = [&](int n) {
    for (int p = 0; p < n; ++p) {
      fill_batch(batch, tokens, p, p + 1, n_blocks);
      model.forward(batch, kv, buffers, logits, pool);
    }
  };
  // Warm-up: faults in the mapped weights and lets the backend set up whatever it caches.
  for (kernels::Numerics numerics : o.prefill_numerics) prefill(std::min(max_tokens, o.n_batch), numerics);
  decode(1);

  for (int n : o.n_prompt) for (kernels::Numerics numerics : o.prefill_numerics) {
    if (n == 0) continue;
    ModelBenchTest t;
    t.name = "pp" + std::to_string(n) + (numerics == kernels::Numerics::Exact ? " exact" : " relaxed");
    t.n_prompt = n;
    const int n_chunks = (n + o.n_batch - 1) / o.n_batch;
    t.ops = 2.0 * (static_cast<double>(result.cost.layer_matmul_params) * n +
                   static_cast<double>(result.cost.output_params) * n_chunks);
    for (int r = 0; r < o.n_reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      prefill(n, numerics);
      t.seconds.push_back(seconds_since(t0));
    }
    summarize(t, n);
    result.tests.push_back(std::move(t));
  }
  for (int n : o.n_gen) {
    if (n == 0) continue;
    ModelBenchTest t;
    t.name = "tg" + std::to_string(n);
    t.n_gen = n;
    t.ops = 2.0 * static_cast<double>(result.cost.layer_matmul_params + result.cost.output_params) * n;
    t.bytes = static_cast<double>(result.cost.decode_bytes_per_token) * n;
    for (int r = 0; r < o.n_reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      decode(n);
      t.seconds.push_back(seconds_since(t0));
    }
    summarize(t, n);
    result.tests.push_back(std::move(t));
  }
  return result;
}

}  // namespace kairo::bench
