#pragma once
// Turns a step plan into the model's flat batch (token ids, positions, slot mapping, block tables), runs the
// forward pass over the paged KV storage, and hands back one logits row per chunk that needs a sample.
#include <vector>

#include "core/thread_pool.h"
#include "engine/scheduler.h"
#include "kv/kv_cache_manager.h"
#include "model/kv_storage.h"
#include "model/model.h"

namespace kairo::engine {

class ModelRunner {
 public:
  ModelRunner(model::Model& model, model::KvStorage& storage, kv::KVCacheManager& kv, ThreadPool& pool)
      : model_(model), storage_(storage), kv_(kv), pool_(pool), buffers_(model.shared_device()) {}

  // Runs the step. Afterwards the logits rows are those of the chunks with needs_sample, in plan order: one per
  // chunk, or 1 + n_draft for a chunk that verifies proposed tokens.
  void run(const StepPlan& plan);
  const float* logits_row(size_t i) const { return logits_.data() + i * model_.config().n_vocab; }
  // The final hidden states the step's embedding chunks pool, chunk after chunk in plan order: for each, the positions
  // embedding_positions names. Embedding chunks get no logits rows.
  const float* hidden_row(size_t i) const { return hidden_.data() + i * model_.config().dim; }
  // The positions [first, last) of an embedding request's chunk whose hidden states it pools: all the chunk's new
  // ones for mean pooling, position 0 for CLS, the prompt's last for last-token pooling; none that it already holds.
  static std::pair<int, int> embedding_positions(const ScheduledChunk& c);
  const model::Batch& last_batch() const { return batch_; }

 private:
  model::Model& model_;
  model::KvStorage& storage_;
  kv::KVCacheManager& kv_;
  ThreadPool& pool_;
  model::Batch batch_;
  model::StepBuffers buffers_;  // the step's activations on the model's device
  std::vector<float> logits_;
  std::vector<float> hidden_;
};

}  // namespace kairo::engine
