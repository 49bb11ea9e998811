#pragma once
// The Vulkan Device (kernels/device.h). Memory and steps are in vulkan_device.cpp; the ops are recorded by
// ops_matmul.cpp (weights, matmul, get_rows), ops_elementwise.cpp (norm, rope, activations, gathers) and
// ops_attention.cpp (KV writes, paged attention).
//
// Spans name buffers by id (DeviceSpan.buffer > 0). Weight matrices live in pieces of whole rows, each one buffer no
// larger than the device can bind at once; a DeviceMatrix's span.buffer is kMatrixIdBit | its index in matrices_.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/device.h"
#include "kernels/vulkan/vk_context.h"
#include "kernels/vulkan/vulkan_device.h"
#include "kernels/vulkan/vk_memory.h"
#include "kernels/vulkan/vk_pipelines.h"
#include "kernels/vulkan/vk_step.h"

namespace kairo::kernels::vulkan {

inline constexpr uint32_t kMatrixIdBit = 0x80000000u;
inline constexpr uint32_t kMaxGroups = 65535;  // the minimum maxComputeWorkGroupCount every device has

class VulkanDevice final : public Device {
 public:
  explicit VulkanDevice(std::unique_ptr<Context> ctx);
  ~VulkanDevice() override;

  DeviceKind kind() const override { return DeviceKind::Vulkan; }
  std::string name() const override;
  bool host_memory() const override { return false; }

  Result<DeviceSpan> allocate(uint64_t bytes, const char* what) override;
  void free(DeviceSpan span) override;
  uint64_t max_allocation_bytes() const override { return ctx_->max_allocation(); }
  Status check_kv_dtype(DType dtype) const override { return vulkan::check_kv_dtype(dtype); }
  Status check_attention_shape(int n_heads, int n_kv_heads, int head_dim) const override;
  void upload(DeviceSpan dst, const void* src, uint64_t bytes) override;
  void download(DeviceSpan src, void* dst, uint64_t bytes) override;
  void copy(DeviceSpan src, DeviceSpan dst, uint64_t bytes) override;
  void synchronize() override;
  DeviceMemoryInfo memory_info() const override;
  uint64_t bytes_in_use() const override { return bytes_in_use_; }
  Result<std::vector<DeviceMatrix>> upload_matrices(std::span<const MatrixView> host) override;
  void free_matrices(std::span<const DeviceMatrix> matrices) override;

  void begin_step(ThreadPool& pool) override;
  DeviceSpan stage(const void* host, uint64_t bytes) override;
  void end_step() override;

  void get_rows(const DeviceMatrix& table, DeviceSpan ids, int64_t n, DeviceSpan out) override;
  void gather_rows(DeviceSpan x, DeviceSpan rows, int64_t n, int64_t dim, DeviceSpan out) override;
  void matmul(const DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
              Numerics numerics) override;
  void rms_norm(DeviceSpan x, DeviceSpan weight, DeviceSpan y, int64_t n_tokens, int64_t dim, float eps) override;
  void rope(DeviceSpan x, DeviceSpan positions, int64_t n_tokens, const RopeParams& p) override;
  void swiglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override;
  void geglu(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n) override;
  void scale(DeviceSpan x, int64_t n, float factor) override;
  void swiglu_oai(DeviceSpan gate, DeviceSpan up, DeviceSpan out, int64_t n, float alpha, float limit) override;
  void add(DeviceSpan y, DeviceSpan x, int64_t n) override;
  void add_bias(DeviceSpan x, DeviceSpan bias, int64_t n_tokens, int64_t n) override;
  void add_rows_scaled(DeviceSpan y, DeviceSpan x, DeviceSpan rows, DeviceSpan scales, int64_t n,
                       int64_t dim) override;
  void kv_write(const DeviceKvLayer& kv, DeviceSpan slot_mapping, DeviceSpan k, DeviceSpan v,
                int64_t n_tokens) override;
  void attention(DeviceSpan q, DeviceSpan out, const DeviceKvLayer& kv, const DeviceAttentionBatch& batch,
                 int n_heads, float scale) override;

  // For the bandwidth probe (bandwidth.cpp).
  const Context& context() const { return *ctx_; }
  Recorder& recorder() { return *recorder_; }
  Pipelines& pipelines() { return *pipelines_; }
  VkBuffer vk_buffer(DeviceSpan s) const { return buffer(s.buffer).buffer; }

 private:
  struct Piece {
    int64_t first_row = 0;
    int64_t n_rows = 0;
    uint32_t buffer = 0;
  };
  struct Matrix {
    std::vector<Piece> pieces;
  };
  struct ArenaChunk {
    uint32_t buffer = 0;
    uint64_t used = 0;
  };

  const Buffer& buffer(uint32_t id) const;
  uint32_t add_buffer(const Buffer& b);
  void release_buffer(uint32_t id);
  // The descriptor for span s: bound at s.offset rounded down to minStorageBufferOffsetAlignment, with the
  // remainder returned in elements of elem_bytes (the shaders add it to their indices).
  VkDescriptorBufferInfo bind(DeviceSpan s, uint32_t elem_bytes, uint32_t* elem_offset) const;
  const Matrix& matrix(const DeviceMatrix& m) const;
  void write_bytes(uint32_t id, uint64_t offset, const void* src, uint64_t bytes);
  void reset_arena();
  DeviceSpan rope_frequencies(const RopeParams& p);
  Buffer& staging(uint64_t min_bytes);

  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Recorder> recorder_;
  std::unordered_map<uint32_t, Buffer> buffers_;
  uint32_t next_buffer_ = 1;
  std::vector<Matrix> matrices_;
  std::vector<uint32_t> free_matrix_ids_;  // entries of matrices_ free_matrices emptied, reused by later uploads
  uint64_t bytes_in_use_ = 0;              // allocate() buffers and matrix pieces
  std::vector<ArenaChunk> arena_;
  bool in_step_ = false;
  Buffer staging_;  // for devices whose buffers the host cannot map
  // (n_rot, freq_base, frequency factors) -> buffer of (hi, lo) pairs
  std::map<std::tuple<int, float, std::vector<float>>, uint32_t> rope_freqs_;
};

// Grid of n workgroups for shaders that flatten (x, y) (common.glsl flat_group): x <= 65535.
inline void flat_grid(uint64_t n, uint32_t* gx, uint32_t* gy) {
  *gx = static_cast<uint32_t>(n < kMaxGroups ? n : kMaxGroups);
  *gy = *gx == 0 ? 0 : static_cast<uint32_t>((n + *gx - 1) / *gx);
}

}  // namespace kairo::kernels::vulkan
