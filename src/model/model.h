#pragma once
// A loaded model: the GGUF file (mapped), its validated config and bound weights, and the generic decoder forward
// pass over a batch of tokens from any number of sequences.
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "kernels/backend.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/kv_storage.h"
#include "model/weights.h"

namespace kairo::model {

class Model {
 public:
  // Opens, validates and binds. `backend` defaults to the fastest for this CPU.
  static Result<std::unique_ptr<Model>> load(const std::string& path, const kernels::Backend* backend = nullptr);
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, const kernels::Backend* backend = nullptr);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return file_; }
  const kernels::Backend& backend() const { return *backend_; }

  // Runs one step. Writes K/V of every token into its slot, and logits for batch.logits_rows into `logits`
  // ([logits_rows.size(), n_vocab], resized). Not thread-safe: one caller at a time (it owns scratch buffers).
  void forward(const Batch& batch, KvStorage& kv, std::vector<float>& logits, ThreadPool& pool);

 private:
  Model() = default;
  struct Scratch;
  // Lets the backend repack matmul weights into its preferred layout (once, at load).
  void pack_weights();

  gguf::File file_;
  ModelConfig config_;
  ModelWeights weights_;
  const kernels::Backend* backend_ = nullptr;
  std::shared_ptr<Scratch> scratch_;
  std::vector<std::shared_ptr<void>> packed_storage_;  // owns repacked weights the views point into
};

}  // namespace kairo::model
