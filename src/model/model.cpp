#include "model/model.h"

#include <optional>
#include <span>

#include "core/format.h"
#include "core/out_of_memory.h"
#include "model/decoder.h"

namespace kairo::model {
namespace {

// A device with memory of its own must hold every weight: refused before anything is copied, with the sizes and
// what to change, instead of failing at the allocation that runs out.
Status check_weights_fit(const kernels::Device& dev, uint64_t weight_bytes) {
  if (dev.host_memory()) return Status::success();
  const kernels::DeviceMemoryInfo mem = dev.memory_info();
  const uint64_t room = mem.free_known ? mem.free_bytes : mem.total_bytes;
  // 10 % stays for the KV cache, the step buffers and the driver (kairo plan's usable fraction).
  if (room == 0 || weight_bytes <= room / 10 * 9) return Status::success();
  return Error{strprintf("the weights need %s but %s has %s %s: pick a smaller quantization of the model (kairo "
                         "quantize, e.g. Q4_K_M), a device with more memory (kairo devices), or --device cpu",
                         human_bytes(weight_bytes).c_str(), dev.name().c_str(), human_bytes(room).c_str(),
                         mem.free_known ? "free" : "in all")};
}

// The load ran out of host memory (a std::bad_alloc from the GGUF metadata, the weight table, the device's copies
// of the weights): what was being done, what could not be allocated, and what to change, as check_weights_fit and
// the planner say it. weight_bytes is 0 while the weights are not yet known.
Error load_out_of_memory(const char* doing, const std::string& failure, uint64_t weight_bytes) {
  const std::string need =
      weight_bytes > 0 ? strprintf(" (the weights need %s)", human_bytes(weight_bytes).c_str()) : std::string();
  return Error{strprintf("out of memory while %s%s: %s%s; pick a smaller quantization of the model (kairo quantize, "
                         "e.g. Q4_K_M) or free memory (kairo plan --model FILE predicts what fits)",
                         doing, need.c_str(), failure.c_str(), address_space_limit_note().c_str())};
}

// Weights go to the device in slices of about this many bytes (see move_weights_to_device).
constexpr uint64_t kUploadSliceBytes = uint64_t{64} << 20;

uint64_t matrix_bytes(const kernels::MatrixView& v) { return v.row_bytes * static_cast<uint64_t>(v.n_rows); }

}  // namespace

// Each entry point catches std::bad_alloc: a Result-returning load must not throw because the system is out of
// memory, the commonest reason a model does not load.
Result<std::unique_ptr<Model>> Model::load(const std::string& path, const kernels::Backend* backend) {
  std::shared_ptr<kernels::Device> device;
  try {
    device = kernels::make_cpu_device(backend);
  } catch (const std::bad_alloc& e) {
    return load_out_of_memory("setting up the CPU device", describe_allocation_failure(e), 0);
  }
  return load(path, std::move(device));
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path, std::shared_ptr<kernels::Device> device,
                                           const LoadProgress& progress) {
  std::optional<gguf::File> file;
  try {
    KAIRO_TRY_ASSIGN(file, gguf::File::open(path));
  } catch (const std::bad_alloc& e) {
    return load_out_of_memory("reading the model's metadata", describe_allocation_failure(e), 0);
  }
  return from_file(std::move(*file), std::move(device), progress);
}

Result<std::unique_ptr<Model>> Model::from_file(gguf::File file, const kernels::Backend* backend) {
  std::shared_ptr<kernels::Device> device;
  try {
    device = kernels::make_cpu_device(backend);
  } catch (const std::bad_alloc& e) {
    return load_out_of_memory("setting up the CPU device", describe_allocation_failure(e), 0);
  }
  return from_file(std::move(file), std::move(device));
}

Result<std::unique_ptr<Model>> Model::from_file(gguf::File file, std::shared_ptr<kernels::Device> device,
                                                const LoadProgress& progress) {
  const char* doing = "reading the model's config";
  uint64_t weight_bytes = 0;
  try {
    std::unique_ptr<Model> m(new Model());
    m->file_ = std::move(file);
    KAIRO_TRY_ASSIGN(m->config_, read_config(m->file_));
    doing = "binding the model's weights";
    KAIRO_TRY_ASSIGN(m->weights_, bind_weights(m->file_, m->config_));
    weight_bytes = m->weights_.n_bytes;
    doing = "moving the weights to the device";
    m->device_ = std::move(device);
    KAIRO_TRY_STATUS(m->move_weights_to_device(progress));
    return m;
  } catch (const std::bad_alloc& e) {
    return load_out_of_memory(doing, describe_allocation_failure(e), weight_bytes);
  }
}

Status Model::move_weights_to_device(const LoadProgress& progress) {
  kernels::Device& dev = *device_;
  if (Status st = dev.check_attention_shape(config_.n_heads, config_.n_kv_heads, config_.head_dim); !st) {
    return Error{dev.name() + ": " + st.error().message};
  }
  KAIRO_TRY_STATUS(check_weights_fit(dev, weights_.n_bytes));
  // On a host-memory device the embedding table keeps its GGUF layout for get_rows and only the matmul views are
  // replaced (by repacked copies where the kernels have a faster layout); a tied output projection gets its own
  // packed copy. Other devices read one layout for both, so a tied output is the uploaded table itself.
  const bool tied = weights_.output.view.data == weights_.token_embd.view.data;
  std::vector<Matrix*> targets;
  if (!dev.host_memory()) targets.push_back(&weights_.token_embd);
  if (dev.host_memory() || !tied) targets.push_back(&weights_.output);
  for (LayerWeights& L : weights_.layers) {
    for (Matrix* m : {&L.wq, &L.wk, &L.wv, &L.wo}) targets.push_back(m);
    if (config_.moe()) {
      targets.push_back(&L.router);
      for (std::vector<Matrix>* stack : {&L.exp_gate, &L.exp_up, &L.exp_down})
        for (Matrix& m : *stack) targets.push_back(&m);
    } else {
      for (Matrix* m : {&L.w_gate, &L.w_up, &L.w_down}) targets.push_back(m);
    }
  }
  std::vector<kernels::MatrixView> views;
  uint64_t total_bytes = 0;
  for (Matrix* m : targets) {
    views.push_back(m->view);
    total_bytes += matrix_bytes(m->view);
  }
  // In slices of about kUploadSliceBytes: progress between them, and each slice's file pages are released before
  // the next is copied, so resident memory never holds much of the model twice.
  std::vector<kernels::DeviceMatrix> uploaded;
  uploaded.reserve(views.size());
  uint64_t done_bytes = 0;
  for (size_t first = 0; first < views.size();) {
    size_t last = first;
    uint64_t slice_bytes = 0;
    while (last < views.size() && (last == first || slice_bytes < kUploadSliceBytes))
      slice_bytes += matrix_bytes(views[last++]);
    Result<std::vector<kernels::DeviceMatrix>> slice_or =
        dev.upload_matrices(std::span<const kernels::MatrixView>(views).subspan(first, last - first));
    if (!slice_or.ok()) {
      dev.free_matrices(uploaded);  // the device keeps nothing of a load that failed
      // Host memory that ran out is the machine's, and the model's size the thing to change; other devices word
      // their own errors (check_weights_fit has already refused weights too big for them).
      if (!dev.host_memory()) return slice_or.error();
      return load_out_of_memory("moving the weights to the device", slice_or.error().message, weights_.n_bytes);
    }
    for (size_t i = first; i < last; ++i) {
      const kernels::DeviceMatrix& on_device = slice_or.value()[i - first];
      const kernels::MatrixView& host = views[i];
      // A copied weight's file pages are released: resident memory then holds each weight once. (The embedding
      // table stays mapped on host-memory devices, where get_rows reads it.)
      const bool copied = on_device.span.ptr != host.data;
      const bool still_read = dev.host_memory() && host.data == weights_.token_embd.view.data;
      if (copied && !still_read) file_.release_pages(host.data, matrix_bytes(host));
      uploaded.push_back(on_device);
    }
    done_bytes += slice_bytes;
    if (progress) progress(done_bytes, total_bytes);
    first = last;
  }
  for (size_t i = 0; i < targets.size(); ++i) *targets[i] = uploaded[i];
  if (!dev.host_memory() && tied) weights_.output = weights_.token_embd;

  if (!dev.host_memory()) {
    const ModelConfig& c = config_;
    std::vector<std::pair<VectorSpan*, int64_t>> vectors{{&weights_.output_norm, c.dim}};  // (vector, n floats)
    for (LayerWeights& L : weights_.layers) {
      vectors.push_back({&L.attn_norm, c.dim});
      vectors.push_back({&L.ffn_norm, c.dim});
      if (c.post_norms) {
        vectors.push_back({&L.post_attn_norm, c.dim});
        vectors.push_back({&L.post_ffn_norm, c.dim});
      }
      if (c.qk_norm) {
        vectors.push_back({&L.q_norm, c.head_dim});
        vectors.push_back({&L.k_norm, c.head_dim});
      }
      if (c.attn_output_bias) vectors.push_back({&L.bo, c.dim});
      if (c.attn_sinks) vectors.push_back({&L.sinks, c.n_heads});
      if (c.moe_biases) {
        vectors.push_back({&L.router_bias, c.n_experts});
        vectors.push_back({&L.exp_gate_bias, static_cast<int64_t>(c.n_experts) * c.expert_ffn_dim});
        vectors.push_back({&L.exp_up_bias, static_cast<int64_t>(c.n_experts) * c.expert_ffn_dim});
        vectors.push_back({&L.exp_down_bias, static_cast<int64_t>(c.n_experts) * c.dim});
      }
      if (c.qkv_bias) {
        vectors.push_back({&L.bq, c.q_dim()});
        vectors.push_back({&L.bk, c.kv_dim()});
        vectors.push_back({&L.bv, c.kv_dim()});
      }
    }
    for (auto [v, n] : vectors) {
      const uint64_t bytes = sizeof(float) * static_cast<uint64_t>(n);
      KAIRO_TRY_ASSIGN(VectorSpan on_device, dev.allocate(bytes, "a norm or bias vector"));
      dev.upload(on_device, v->ptr, bytes);
      *v = on_device;
    }
  }
  return Status::success();
}

void Model::forward(const Batch& batch, KvStorage& kv, StepBuffers& buffers, std::vector<float>& logits,
                    ThreadPool& pool, std::vector<float>* hidden) {
  decoder_forward(config_, weights_, batch, kv, buffers, logits, pool, &loras_, hidden);
}

void Model::set_context_length(int64_t n_tokens) {
  if (weights_.rope_factors_long == nullptr) return;
  weights_.rope_freq_factors =
      n_tokens > config_.rope_original_context ? weights_.rope_factors_long : weights_.rope_factors_short;
}

}  // namespace kairo::model
