#pragma once
// The device the forward pass runs on. A device owns memory (allocate, free, upload, download, copy, synchronise) and
// runs every op of the model on spans of that memory. model/decoder.cpp is written once against this interface; the
// CPU device (kernels/cpu/cpu_device.h) runs the Backend kernel table on host memory with no copies, the Vulkan
// device (kernels/vulkan/) records the ops as compute dispatches into one command buffer per step, the CUDA device
// (kernels/cuda/cuda_device.h) enqueues them on one stream and replays repeated steps as CUDA graphs.
//
// Op semantics and layouts are those of kernels/backend.h: activations are row-major f32, one row per token.
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"

namespace kairo::kernels {

// Some bytes of device memory. On a device whose memory is the host's (the CPU), `ptr` is their address and buffer
// stays 0; other devices name one of their buffers and an offset into it (`ptr` stays null).
struct DeviceSpan {
  void* ptr = nullptr;
  uint32_t buffer = 0;
  uint64_t offset = 0;

  DeviceSpan at(uint64_t bytes) const {
    return DeviceSpan{ptr ? static_cast<char*>(ptr) + bytes : nullptr, buffer, offset + bytes};
  }
  bool empty() const { return ptr == nullptr && buffer == 0; }
  template <typename T>
  T* host() const { return static_cast<T*>(ptr); }
};

// A weight matrix on a device. `view` describes its layout (dtype, shape, row bytes, packing; on the CPU device
// view.data is where the bytes are); `span` is where the device keeps them.
struct DeviceMatrix {
  MatrixView view;
  DeviceSpan span;
};

// One layer of the paged KV cache on a device (see KvLayerView).
struct DeviceKvLayer {
  DeviceSpan k, v;  // [n_slots, n_kv_heads, head_dim] in dtype
  DType dtype = DType::F16;
  int n_kv_heads = 0;
  int head_dim = 0;
  int block_size = 16;
};

// AttentionBatch with its arrays on the device.
struct DeviceAttentionBatch {
  int64_t n_tokens = 0;
  DeviceSpan positions;     // [n_tokens] int32
  DeviceSpan seq_idx;       // [n_tokens] int32
  DeviceSpan block_tables;  // [n_seqs, max_blocks_per_seq] int32
  int max_blocks_per_seq = 0;
  int window = 0;     // AttentionBatch::window
  float softcap = 0;  // AttentionBatch::softcap
  DeviceSpan sinks;   // AttentionBatch::sinks: [n_heads] f32, or empty
  // Exact: a token's output must not depend on the other tokens of the call (a device that splits long contexts
  // across workgroups by token count does so only under Relaxed).
  Numerics numerics = Numerics::Exact;
};

struct DeviceMemoryInfo {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // 0 with free_known false where the API does not say
  bool free_known = false;
};

enum class DeviceKind { Cpu, Vulkan, Cuda };

// An unrecoverable device failure (a lost device, a failed submission). The step that hit it is lost; the caller
// fails the requests in flight and stops using the device.
class DeviceLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GroupedMatmul (kernels/backend.h) on a device: the weights, and the group offsets on the host (they decide the
// work, so every device needs them there); in_rows is [offsets[n_groups]] int32 on the device, or empty.
struct DeviceGroupedMatmul {
  const DeviceMatrix* ws = nullptr;  // [n_groups * n_mats]
  int n_mats = 0;
  int n_groups = 0;
  const int64_t* offsets = nullptr;  // host memory, [n_groups + 1]
  DeviceSpan in_rows;
};

// One adapter's pair for one projection (DeviceLoraDeltas); a null `a` leaves the projection alone in that group.
struct DeviceLoraPair {
  const DeviceMatrix* a = nullptr;  // [rank, n_in]
  const DeviceMatrix* b = nullptr;  // [n_out, rank]
  float scale = 0;
};

// LoraDeltas (kernels/backend.h) on a device: the grouping on the host (it decides the work) and the token rows on
// the device, plus the scratch the default implementation runs its ops in.
struct DeviceLoraDeltas {
  DeviceSpan x;  // [n_tokens, n_in] f32
  int64_t n_in = 0;
  int n_groups = 0;
  const int64_t* offsets = nullptr;  // host memory, [n_groups + 1]
  DeviceSpan rows;                   // [offsets[n_groups]] int32
  int n_targets = 0;
  const DeviceLoraPair* pairs = nullptr;  // host memory, [n_groups * n_targets]
  const DeviceSpan* ys = nullptr;         // [n_targets]
  int max_rank = 0;
  Numerics numerics = Numerics::Exact;
  DeviceSpan h;       // room for n_targets * offsets[n_groups] * max_rank f32: the shrinks
  // For the default implementation only (a device with a fused kernel ignores them):
  DeviceSpan gather;  // room for the largest group's rows of x (f32)
  DeviceSpan expand;  // room for the largest group's rows of the widest output (f32)
  DeviceSpan ones;    // the largest group's count of 1.0f (add_rows_scaled's scales)
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  // "cpu (avx512)", "vulkan:0 (llvmpipe ...)": for logs and `kairo devices`.
  virtual std::string name() const = 0;
  // True when spans are host addresses (span.ptr), so the caller can skip uploads and downloads.
  virtual bool host_memory() const = 0;

  // ---- memory ----
  // `bytes` of zero-filled device memory for as long as the device lives or until free(). The error says how much
  // was asked for and what the device has.
  virtual Result<DeviceSpan> allocate(uint64_t bytes, const char* what) = 0;
  virtual void free(DeviceSpan span) = 0;
  // The largest single allocation (KV layers and step buffers must each fit in one).
  virtual uint64_t max_allocation_bytes() const = 0;
  virtual void upload(DeviceSpan dst, const void* src, uint64_t bytes) = 0;
  // Waits for the work recorded so far, then copies.
  virtual void download(DeviceSpan src, void* dst, uint64_t bytes) = 0;
  virtual void copy(DeviceSpan src, DeviceSpan dst, uint64_t bytes) = 0;
  // Waits for every piece of work submitted or recorded so far.
  virtual void synchronize() = 0;
  virtual DeviceMemoryInfo memory_info() const = 0;
  // Bytes this device holds now for allocate() and upload_matrices() (not its per-step staging): what free() and
  // free_matrices() give back. An accounting of the device's own, so a test can show that load/unload cycles do not
  // grow it; memory_info() reports the whole device (other processes included).
  virtual uint64_t bytes_in_use() const = 0;
  // Whether kv_write and attention take a KV cache of this dtype; the error names the dtypes that work.
  virtual Status check_kv_dtype(DType dtype) const = 0;
  // Whether attention takes this head shape (device kernels cap head_dim); checked at model load, before any upload.
  virtual Status check_attention_shape(int n_heads, int n_kv_heads, int head_dim) const {
    (void)n_heads, (void)n_kv_heads, (void)head_dim;
    return Status::success();
  }

  // Weights, once at load: each matrix is copied to the device (and may be repacked into a layout private to this
  // device's matmul). The device owns the copies until it is destroyed. An entry whose span.ptr equals the host
  // view's data was not copied (the CPU device with nothing to repack): keep the host bytes alive.
  virtual Result<std::vector<DeviceMatrix>> upload_matrices(std::span<const MatrixView> host) = 0;
  // Gives back what upload_matrices made for these matrices (a LoRA adapter unloaded while serving): each one at most
  // once, and none used afterwards. Waits for recorded work that may still read them. A matrix the device did not
  // copy (span.ptr == its host view's data on the CPU device) is the caller's memory and is skipped.
  virtual void free_matrices(std::span<const DeviceMatrix> matrices) = 0;

  // ---- one step ----
  // Ops between begin_step and end_step may run asynchronously; end_step waits for all of them.
  virtual void begin_step(ThreadPool& pool) = 0;
  // Per-step input (token ids, positions, block tables ...): device memory holding a copy of `bytes` at `host`,
  // valid until end_step. The CPU device returns `host` itself.
  virtual DeviceSpan stage(const void* host, uint64_t bytes) = 0;
  virtual void end_step() = 0;

  // ---- ops (semantics of kernels/backend.h) ----
  // out[t, :] = dequant(table row ids[t]).  ids: [n] int32, out: [n, table.n_cols] f32
  virtual void get_rows(const DeviceMatrix& table, DeviceSpan ids, int64_t n, DeviceSpan out) = 0;
  // out[i, :] = x[rows[i], :].  rows: [n] int32, x/out rows of dim f32
  virtual void gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) = 0;
  // ys[i] = ws[i] · x for n_mats weights reading the same input x: [n_tokens, n_cols] -> ys[i]: [n_tokens, n_rows]
  virtual void matmul(const DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
                      Numerics numerics) = 0;
  // A mixture of experts' matmul (GroupedMatmul): ys[i] rows offsets[g] .. offsets[g + 1] = group g's weight i times
  // its rows of x. gather: room for the largest group's input rows (f32), which this default implementation
  // gathers each group's rows into before matmul; a device with a grouped kernel may ignore it.
  virtual void matmul_grouped(const DeviceGroupedMatmul& g, DeviceSpan x, const DeviceSpan* ys, DeviceSpan gather,
                              Numerics numerics);
  virtual void rms_norm(DeviceSpan x, DeviceSpan weight, DeviceSpan y, int64_t n_tokens, int64_t dim, float eps) = 0;
  virtual void rope(DeviceSpan x, DeviceSpan positions, int64_t n_tokens, const RopeParams& p) = 0;
  virtual void swiglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) = 0;
  virtual void geglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) = 0;
  // gpt-oss's clamped SwiGLU: g = min(gate, limit), u = clamp(up, -limit, limit), out = g * sigmoid(alpha g) * (u + 1)
  virtual void swiglu_oai(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n, float alpha, float limit) = 0;
  // x[i] *= factor
  virtual void scale(DeviceSpan x, int64_t n, float factor) = 0;
  virtual void add(DeviceSpan y, DeviceSpan x, int64_t n) = 0;
  virtual void add_bias(DeviceSpan x, DeviceSpan bias, int64_t n_tokens, int64_t n) = 0;
  // y[rows[i], :] += scales[i] * x[i, :] for i < n (a mixture of experts adds each expert's output into its tokens'
  // residual rows). rows: [n] int32, distinct within one call; scales: [n] f32; x: [n, dim]; y: rows of dim.
  virtual void add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                               int64_t dim) = 0;
  // Every LoRA delta of one call site (LoraDeltas). This default runs each group as gather_rows, one shared-input
  // matmul for the shrinks, then per projection scale, matmul and add_rows_scaled; the CPU device fuses it all into
  // two parallel passes.
  virtual void add_lora_deltas(const DeviceLoraDeltas& job);
  // slot_mapping: [n_tokens] int64
  virtual void kv_write(const DeviceKvLayer& kv, DeviceSpan slot_mapping, DeviceSpan k, DeviceSpan v,
                        int64_t n_tokens) = 0;
  virtual void attention(DeviceSpan q, DeviceSpan out, const DeviceKvLayer& kv, const DeviceAttentionBatch& batch,
                         int n_heads, float scale) = 0;
};

// The CPU device over a kernel table (the fastest for this CPU by default).
std::shared_ptr<Device> make_cpu_device(const Backend* backend = nullptr);

}  // namespace kairo::kernels
