// KV writes and paged attention.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/format.h"
#include "kernels/vulkan/vk_device_impl.h"
#include "kernels/vulkan/vulkan_device.h"

namespace kairo::kernels::vulkan {
namespace {

constexpr int kMaxHeadDim = 256;  // attention.comp MAX_DIM

struct KvWritePush {
  uint32_t row, slots_off, k_off, v_off, kc_off, vc_off, tok0;
};

struct AttentionPush {
  uint32_t n_heads, head_dim, group, kv_row, block_size, max_blocks;
  float scale;
  uint32_t q_off, o_off, kc_off, vc_off, pos_off, seq_off, bt_off, tok0;
  uint32_t window;
  float softcap;
  uint32_t has_sinks, sinks_off;
};

// The shader suffix of a KV dtype. Another dtype is a caller that skipped check_kv_dtype: a programmer error.
std::string kv_suffix(DType t) {
  const Status s = check_kv_dtype(t);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    std::abort();
  }
  return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16";
}

uint32_t kv_elem_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

}  // namespace

void VulkanDevice::kv_write(const DeviceKvLayer& kv, DeviceSpan slot_mapping, DeviceSpan k, DeviceSpan v,
                            int64_t n_tokens) {
  if (n_tokens <= 0) return;
  assert(kv.head_dim % 2 == 0);
  const Pipeline& p = pipelines_->get("kv_write_" + kv_suffix(kv.dtype), 5);
  KvWritePush pc{};
  pc.row = static_cast<uint32_t>(kv.n_kv_heads * kv.head_dim);
  const uint32_t eb = kv_elem_bytes(kv.dtype);
  // 16-bit caches are written a word (two values) at a time, so their spans must start on a word.
  assert(kv.k.offset % 4 == 0 && kv.v.offset % 4 == 0);
  VkDescriptorBufferInfo b[5] = {bind(slot_mapping, 4, &pc.slots_off), bind(k, 4, &pc.k_off), bind(v, 4, &pc.v_off),
                                 bind(kv.k, eb, &pc.kc_off), bind(kv.v, eb, &pc.vc_off)};
  const uint32_t gx = (pc.row / 2 + 63) / 64;
  for (int64_t t0 = 0; t0 < n_tokens; t0 += kMaxGroups) {
    pc.tok0 = static_cast<uint32_t>(t0);
    recorder_->dispatch(p, b, &pc, sizeof(pc), gx, static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, n_tokens - t0)));
  }
}

Status VulkanDevice::check_attention_shape(int n_heads, int n_kv_heads, int head_dim) const {
  if (n_kv_heads <= 0 || n_heads <= 0 || n_heads % n_kv_heads != 0) {
    return Error{strprintf("attention with %d heads and %d KV heads: the head count must be a positive multiple of "
                           "the KV head count", n_heads, n_kv_heads)};
  }
  if (head_dim <= 0 || head_dim > kMaxHeadDim || head_dim % 2 != 0) {
    return Error{strprintf("head size %d is not supported by the Vulkan attention shader (even, up to %d): run this "
                           "model on --device cpu", head_dim, kMaxHeadDim)};
  }
  return Status::success();
}

void VulkanDevice::attention(DeviceSpan q, DeviceSpan out, const DeviceKvLayer& kv, const DeviceAttentionBatch& batch,
                             int n_heads, float scale) {
  if (batch.n_tokens <= 0) return;
  assert(kv.head_dim <= kMaxHeadDim && n_heads % kv.n_kv_heads == 0);
  const Pipeline& p = pipelines_->get("attention_" + kv_suffix(kv.dtype), 8);
  AttentionPush pc{};
  pc.n_heads = static_cast<uint32_t>(n_heads);
  pc.head_dim = static_cast<uint32_t>(kv.head_dim);
  pc.group = static_cast<uint32_t>(n_heads / kv.n_kv_heads);
  pc.kv_row = static_cast<uint32_t>(kv.n_kv_heads * kv.head_dim);
  pc.block_size = static_cast<uint32_t>(kv.block_size);
  pc.max_blocks = static_cast<uint32_t>(batch.max_blocks_per_seq);
  pc.scale = scale;
  pc.window = static_cast<uint32_t>(std::max(batch.window, 0));
  pc.softcap = batch.softcap;
  const uint32_t eb = kv_elem_bytes(kv.dtype);
  VkDescriptorBufferInfo b[8] = {bind(q, 4, &pc.q_off),
                                 bind(out, 4, &pc.o_off),
                                 bind(kv.k, eb, &pc.kc_off),
                                 bind(kv.v, eb, &pc.vc_off),
                                 bind(batch.positions, 4, &pc.pos_off),
                                 bind(batch.seq_idx, 4, &pc.seq_off),
                                 bind(batch.block_tables, 4, &pc.bt_off),
                                 // Without sinks the binding still needs a buffer: the queries, never read.
                                 bind(batch.sinks.empty() ? q : batch.sinks, 4, &pc.sinks_off)};
  pc.has_sinks = batch.sinks.empty() ? 0 : 1;
  for (int64_t t0 = 0; t0 < batch.n_tokens; t0 += kMaxGroups) {
    pc.tok0 = static_cast<uint32_t>(t0);
    recorder_->dispatch(p, b, &pc, sizeof(pc), pc.n_heads,
                        static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, batch.n_tokens - t0)));
  }
}

}  // namespace kairo::kernels::vulkan
