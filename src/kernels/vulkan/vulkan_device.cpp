// The Vulkan Device: memory, transfers and steps. Ops are in ops_*.cpp.
#include "kernels/vulkan/vulkan_device.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "kernels/vulkan/vk_device_impl.h"

namespace kairo::kernels::vulkan {
namespace {

constexpr uint64_t kArenaAlign = 256;            // every stage() sub-allocation (>= any offset alignment)
constexpr uint64_t kArenaMinBytes = 1ull << 20;
constexpr uint64_t kStagingBytes = 64ull << 20;  // transfer chunk where the host cannot map device memory

}  // namespace

VulkanDevice::VulkanDevice(std::unique_ptr<Context> ctx)
    : ctx_(std::move(ctx)),
      pipelines_(std::make_unique<Pipelines>(*ctx_)),
      recorder_(std::make_unique<Recorder>(*ctx_)) {}

VulkanDevice::~VulkanDevice() {
  try {
    recorder_->flush();
  } catch (const DeviceLost&) {
  }
  recorder_.reset();
  pipelines_.reset();
  for (auto& [id, b] : buffers_) destroy_buffer(*ctx_, b);
  destroy_buffer(*ctx_, staging_);
}

std::string VulkanDevice::name() const {
  return "vulkan:" + std::to_string(ctx_->info.index) + " (" + ctx_->info.name + ")";
}

const Buffer& VulkanDevice::buffer(uint32_t id) const {
  auto it = buffers_.find(id);
  assert(it != buffers_.end() && "span of a buffer this device does not have (freed, or another device's)");
  return it->second;
}

uint32_t VulkanDevice::add_buffer(const Buffer& b) {
  const uint32_t id = next_buffer_++;
  assert(id < kMatrixIdBit);
  buffers_.emplace(id, b);
  return id;
}

void VulkanDevice::release_buffer(uint32_t id) {
  auto it = buffers_.find(id);
  assert(it != buffers_.end());
  destroy_buffer(*ctx_, it->second);
  buffers_.erase(it);
}

VkDescriptorBufferInfo VulkanDevice::bind(DeviceSpan s, uint32_t elem_bytes, uint32_t* elem_offset) const {
  const Buffer& b = buffer(s.buffer);
  const uint64_t align = std::max<uint64_t>(ctx_->limits.minStorageBufferOffsetAlignment, 4);
  const uint64_t base = s.offset / align * align;
  assert((s.offset - base) % elem_bytes == 0 && "span offset not a multiple of its element size");
  *elem_offset = static_cast<uint32_t>((s.offset - base) / elem_bytes);
  return VkDescriptorBufferInfo{b.buffer, base, b.size - base};
}

Result<DeviceSpan> VulkanDevice::allocate(uint64_t bytes, const char* what) {
  KAIRO_TRY_ASSIGN(Buffer b, create_buffer(*ctx_, bytes, BufferKind::Device, what));
  if (b.mapped != nullptr) {
    std::memset(b.mapped, 0, b.size);  // new memory: no recorded work can touch it yet
  } else {
    recorder_->fill_zero(b.buffer, 0, VK_WHOLE_SIZE);
  }
  bytes_in_use_ += b.size;
  return DeviceSpan{nullptr, add_buffer(b), 0};
}

void VulkanDevice::free(DeviceSpan span) {
  if (span.buffer == 0) return;
  assert(!(span.buffer & kMatrixIdBit) && "matrices go back with free_matrices");
  synchronize();  // recorded work may still read or write it
  bytes_in_use_ -= buffer(span.buffer).size;
  release_buffer(span.buffer);
}

Buffer& VulkanDevice::staging(uint64_t min_bytes) {
  if (staging_.size < min_bytes) {
    destroy_buffer(*ctx_, staging_);
    auto b = create_buffer(*ctx_, std::max(min_bytes, std::min(kStagingBytes, ctx_->max_allocation())),
                           BufferKind::Staging, "the staging buffer");
    if (!b.ok()) throw DeviceLost(b.error().message);
    staging_ = *b;
  }
  return staging_;
}

// Host bytes into a device buffer, in order with the recorded work: inside a step they go through the step arena
// and a recorded copy; outside, the recorded work is run first, then the bytes are written directly (mapped
// memory) or through the staging buffer.
void VulkanDevice::write_bytes(uint32_t id, uint64_t offset, const void* src, uint64_t bytes) {
  const Buffer& dst = buffer(id);
  assert(offset + bytes <= dst.size);
  if (in_step_) {
    const DeviceSpan s = stage(src, bytes);
    recorder_->copy(buffer(s.buffer).buffer, s.offset, dst.buffer, offset, bytes);
    return;
  }
  recorder_->flush();
  if (dst.mapped != nullptr) {
    std::memcpy(static_cast<char*>(dst.mapped) + offset, src, bytes);
    return;
  }
  const auto* p = static_cast<const char*>(src);
  for (uint64_t done = 0; done < bytes;) {
    Buffer& st = staging(std::min<uint64_t>(bytes, kStagingBytes));
    const uint64_t n = std::min(bytes - done, st.size);
    std::memcpy(st.mapped, p + done, n);
    recorder_->copy(st.buffer, 0, dst.buffer, offset + done, n);
    recorder_->flush();
    done += n;
  }
}

void VulkanDevice::upload(DeviceSpan dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return;
  write_bytes(dst.buffer, dst.offset, src, bytes);
}

void VulkanDevice::download(DeviceSpan src, void* dst, uint64_t bytes) {
  if (bytes == 0) return;
  recorder_->flush();
  const Buffer& b = buffer(src.buffer);
  assert(src.offset + bytes <= b.size);
  if (b.mapped != nullptr) {
    std::memcpy(dst, static_cast<const char*>(b.mapped) + src.offset, bytes);
    return;
  }
  auto* p = static_cast<char*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    Buffer& st = staging(std::min<uint64_t>(bytes, kStagingBytes));
    const uint64_t n = std::min(bytes - done, st.size);
    recorder_->copy(b.buffer, src.offset + done, st.buffer, 0, n);
    recorder_->flush();
    std::memcpy(p + done, st.mapped, n);
    done += n;
  }
}

void VulkanDevice::copy(DeviceSpan src, DeviceSpan dst, uint64_t bytes) {
  recorder_->copy(buffer(src.buffer).buffer, src.offset, buffer(dst.buffer).buffer, dst.offset, bytes);
}

void VulkanDevice::synchronize() { recorder_->flush(); }

DeviceMemoryInfo VulkanDevice::memory_info() const {
  DeviceMemoryInfo info;
  bool all_known = true;
  uint64_t free_bytes = 0;
  for (const MemoryHeapInfo& h : ctx_->heaps()) {
    if (!h.device_local) continue;
    info.total_bytes += h.size_bytes;
    all_known = all_known && h.budget_known;
    if (h.budget_known) free_bytes += h.budget_bytes > h.usage_bytes ? h.budget_bytes - h.usage_bytes : 0;
  }
  info.free_known = all_known && info.total_bytes > 0;
  info.free_bytes = info.free_known ? free_bytes : 0;
  return info;
}

void VulkanDevice::begin_step(ThreadPool&) {
  recorder_->flush();  // ops recorded outside a step run first
  reset_arena();
  in_step_ = true;
}

void VulkanDevice::end_step() {
  recorder_->flush();
  in_step_ = false;
  reset_arena();
}

// Keeps only the largest chunk, so a step that outgrew the arena allocates once and later steps reuse it.
void VulkanDevice::reset_arena() {
  if (arena_.empty()) return;
  auto largest = std::max_element(arena_.begin(), arena_.end(), [&](const ArenaChunk& a, const ArenaChunk& b) {
    return buffer(a.buffer).size < buffer(b.buffer).size;
  });
  const ArenaChunk keep{largest->buffer, 0};
  for (const ArenaChunk& c : arena_) {
    if (c.buffer != keep.buffer) release_buffer(c.buffer);
  }
  arena_.assign(1, keep);
}

// Staged bytes stay valid until end_step (or, outside a step, until the next begin_step / end_step).
DeviceSpan VulkanDevice::stage(const void* host, uint64_t bytes) {
  if (arena_.empty() || (arena_.back().used + kArenaAlign - 1) / kArenaAlign * kArenaAlign + bytes >
                            buffer(arena_.back().buffer).size) {
    const uint64_t last = arena_.empty() ? 0 : buffer(arena_.back().buffer).size;
    const uint64_t size = std::min(std::max({bytes, 2 * last, kArenaMinBytes}), ctx_->max_allocation());
    assert(bytes <= size && "one staged input larger than the largest buffer");
    auto b = create_buffer(*ctx_, size, BufferKind::Staging, "the per-step input arena");
    if (!b.ok()) throw DeviceLost(b.error().message);
    arena_.push_back(ArenaChunk{add_buffer(*b), 0});
  }
  ArenaChunk& c = arena_.back();
  const uint64_t offset = (c.used + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  const Buffer& b = buffer(c.buffer);
  if (bytes > 0) std::memcpy(static_cast<char*>(b.mapped) + offset, host, bytes);
  c.used = offset + bytes;
  return DeviceSpan{nullptr, c.buffer, offset};
}

Result<std::shared_ptr<Device>> open_device(int index) {
  KAIRO_TRY_ASSIGN(std::unique_ptr<Context> ctx, open_context(index));
  try {
    return std::shared_ptr<Device>(std::make_shared<VulkanDevice>(std::move(ctx)));
  } catch (const DeviceLost& e) {
    return Error{e.what()};
  }
}

Status check_kv_dtype(DType dtype) {
  if (dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16) return Status::success();
  return Error{"vulkan: KV cache dtype " + std::string(dtype_name(dtype)) +
               " is not supported by the Vulkan device: use --kv-dtype f16, bf16 or f32"};
}

}  // namespace kairo::kernels::vulkan
