#pragma once
// A loaded model: the GGUF file (mapped), its validated config, its weights moved to the device it runs on, and the
// generic decoder forward pass over a batch of tokens from any number of sequences.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "kernels/device.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/decoder.h"
#include "model/kv_storage.h"
#include "model/lora/adapter.h"
#include "model/lora/lora_set.h"
#include "model/weights.h"

namespace kairo::model {

// Bytes of weights on the device so far, of the total: called as the load moves them there (a progress bar's feed).
using LoadProgress = std::function<void(uint64_t done_bytes, uint64_t total_bytes)>;

class Model {
 public:
  // Opens, validates, binds and moves the weights to `device` (the CPU device over `backend`, by default the
  // fastest kernels for this CPU).
  static Result<std::unique_ptr<Model>> load(const std::string& path, const kernels::Backend* backend = nullptr);
  static Result<std::unique_ptr<Model>> load(const std::string& path, std::shared_ptr<kernels::Device> device,
                                             const LoadProgress& progress = {});
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, const kernels::Backend* backend = nullptr);
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, std::shared_ptr<kernels::Device> device,
                                                  const LoadProgress& progress = {});

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return file_; }
  kernels::Device& device() const { return *device_; }
  const std::shared_ptr<kernels::Device>& shared_device() const { return device_; }

  // The longest sequence this model will run (the engine's max-model-len). Long-context rope (phi3) picks its
  // factor set from it, as llama.cpp does from n_ctx per sequence; until called, the model's full context counts.
  // Call before the first step: KV written under one set does not fit the other.
  void set_context_length(int64_t n_tokens);

  // Runs one step on `buffers` (of this model's device; see StepBuffers). Writes K/V of every token into its slot,
  // and logits for batch.logits_rows into `logits` ([logits_rows.size(), n_vocab], resized). One step at a time
  // per device: a device records one step at a time.
  // `hidden`: batch.hidden_rows' final hidden states ([rows, dim], after the output norm; embedding requests).
  void forward(const Batch& batch, KvStorage& kv, StepBuffers& buffers, std::vector<float>& logits, ThreadPool& pool,
               std::vector<float>* hidden = nullptr);

  // Makes `adapter` (read against this model: lora::load_adapter(path, file(), config())) servable; returns the
  // index batch.adapter_idx names it by (the lowest free one: 1, 2, ... before serving). Not while a step runs: the
  // engine calls these between steps (lora::LoraSet).
  Result<int> add_adapter(const lora::Adapter& adapter) { return loras_.add(adapter, config_, *device_); }
  // The same from lora::prepare_adapter(adapter, config()): only the upload is left to do here.
  Result<int> add_adapter(lora::PreparedAdapter prepared) { return loras_.add(std::move(prepared), *device_); }
  // Adapter `source` at another user scale, over the same matrices: the lowest free index from first_idx on.
  int add_rescaled_adapter(int source, float user_scale, int first_idx) {
    return loras_.add_rescaled(source, user_scale, first_idx);
  }
  void remove_adapter(int idx) { loras_.remove(idx); }
  const lora::LoraSet& adapters() const { return loras_; }

 private:
  Model() = default;
  // Copies (or, on the CPU, repacks) the weights for the device, once at load.
  Status move_weights_to_device(const LoadProgress& progress);

  gguf::File file_;
  ModelConfig config_;
  ModelWeights weights_;
  std::shared_ptr<kernels::Device> device_;
  lora::LoraSet loras_;
};

}  // namespace kairo::model
