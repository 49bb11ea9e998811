#include "kernels/cuda/cuda_weights.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "core/format.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/packed_layout.h"

namespace kairo::kernels::cuda {
namespace {

constexpr size_t kStagingBytes = 32u << 20;

// Double-buffered pinned staging, shared by every upload of the process (loads are rare; a mutex keeps them apart).
class Uploader {
 public:
  Uploader() {
    for (int i = 0; i < 2; ++i) {
      staging_[i] = PinnedBuffer(kStagingBytes);
      CUDA_CHECK(cudaEventCreateWithFlags(&free_[i], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventRecord(free_[i], CudaContext::get().stream()));
    }
  }

  void copy_matrix(const PackedLayout& l, const MatrixView& host, uint8_t* dst) {
    std::lock_guard<std::mutex> lock(mutex_);
    cudaStream_t stream = CudaContext::get().stream();
    CUDA_CHECK(cudaMemsetAsync(dst, 0, static_cast<size_t>(l.total_bytes), stream));  // alignment gaps
    // Slices of whole rows: the slice's quants first in the staging buffer, then its scales.
    const int64_t per_row = l.qs_row_bytes + 2 * l.scale_row_elems;
    const int64_t rows_per_slice = static_cast<int64_t>(kStagingBytes) / per_row;
    const auto* src = static_cast<const uint8_t*>(host.data);
    uint16_t* dev_scales = l.scale_row_elems > 0 ? reinterpret_cast<uint16_t*>(dst + l.scales_offset) : nullptr;
    for (int64_t r0 = 0; r0 < l.n_rows; r0 += rows_per_slice) {
      const int64_t r1 = std::min(l.n_rows, r0 + rows_per_slice);
      uint8_t* qs = acquire();
      auto* sc = reinterpret_cast<uint16_t*>(qs + (r1 - r0) * l.qs_row_bytes);
      pack_rows(l, src, host.row_bytes, r0, r1, qs, dev_scales != nullptr ? sc : nullptr);
      CUDA_CHECK(cudaMemcpyAsync(dst + r0 * l.qs_row_bytes, qs, static_cast<size_t>((r1 - r0) * l.qs_row_bytes),
                                 cudaMemcpyHostToDevice, stream));
      if (dev_scales != nullptr) {
        CUDA_CHECK(cudaMemcpyAsync(dev_scales + r0 * l.scale_row_elems, sc,
                                   static_cast<size_t>((r1 - r0) * l.scale_row_elems * 2), cudaMemcpyHostToDevice,
                                   stream));
      }
      release(stream);
    }
    // The caller may unmap the host tensor once we return.
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void copy_bytes(const void* host, size_t n_bytes, void* dst) {
    std::lock_guard<std::mutex> lock(mutex_);
    cudaStream_t stream = CudaContext::get().stream();
    for (size_t off = 0; off < n_bytes; off += kStagingBytes) {
      const size_t n = std::min(kStagingBytes, n_bytes - off);
      uint8_t* buf = acquire();
      std::memcpy(buf, static_cast<const uint8_t*>(host) + off, n);
      CUDA_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(dst) + off, buf, n, cudaMemcpyHostToDevice, stream));
      release(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  // The next staging buffer, once the copy that last read it has finished.
  uint8_t* acquire() {
    CUDA_CHECK(cudaEventSynchronize(free_[next_]));
    return staging_[next_].as<uint8_t>();
  }
  void release(cudaStream_t stream) {
    CUDA_CHECK(cudaEventRecord(free_[next_], stream));
    next_ ^= 1;
  }

  std::mutex mutex_;
  PinnedBuffer staging_[2];
  cudaEvent_t free_[2] = {nullptr, nullptr};
  int next_ = 0;
};

Uploader& uploader() {
  static Uploader* u = new Uploader();  // lives as long as the process, like the context
  return *u;
}

Result<std::shared_ptr<void>> device_alloc(size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Error{strprintf("could not allocate %s of device memory for weights: %s", human_bytes(bytes).c_str(),
                           cudaGetErrorString(err))};
  }
  return std::shared_ptr<void>(p, [](void* q) { CUDA_CHECK(cudaFree(q)); });
}

}  // namespace

Status cuda_check_weight(const MatrixView& host) {
  if (host.packing != 0) return Error{"only GGUF-layout weights can be uploaded to the CUDA backend"};
  KAIRO_TRY_ASSIGN(const PackedLayout l, packed_layout(host.dtype, host.n_rows, host.n_cols));
  if (l.qs_row_bytes + 2 * l.scale_row_elems > static_cast<int64_t>(kStagingBytes)) {
    return Error{"weight rows over 32 MiB are not supported by the CUDA upload"};
  }
  return Status::success();
}

Result<PackedMatrix> upload_matrix(const MatrixView& host) {
  KAIRO_TRY_STATUS(cuda_check_weight(host));
  KAIRO_TRY_ASSIGN(const PackedLayout l, packed_layout(host.dtype, host.n_rows, host.n_cols));
  KAIRO_TRY_ASSIGN(std::shared_ptr<void> storage, device_alloc(static_cast<size_t>(l.total_bytes)));
  uploader().copy_matrix(l, host, static_cast<uint8_t*>(storage.get()));
  PackedMatrix out;
  out.view = host;
  out.view.data = storage.get();
  out.view.row_bytes = static_cast<size_t>(l.qs_row_bytes);
  out.view.packing = kCudaPacking;
  out.storage = std::move(storage);
  return out;
}

Result<MatrixView> CudaWeights::upload(const MatrixView& host) {
  if (auto it = matrices_.find(host.data); it != matrices_.end()) return it->second;
  KAIRO_TRY_ASSIGN(PackedMatrix m, upload_matrix(host));
  n_bytes_ += static_cast<uint64_t>(packed_layout(host.dtype, host.n_rows, host.n_cols)->total_bytes);
  storage_.push_back(std::move(m.storage));
  matrices_.emplace(host.data, m.view);
  return m.view;
}

Result<const float*> CudaWeights::upload(const float* host, int64_t n) {
  if (auto it = vectors_.find(host); it != vectors_.end()) return it->second;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  KAIRO_TRY_ASSIGN(std::shared_ptr<void> storage, device_alloc(bytes));
  uploader().copy_bytes(host, bytes, storage.get());
  const auto* p = static_cast<const float*>(storage.get());
  n_bytes_ += bytes;
  storage_.push_back(std::move(storage));
  vectors_.emplace(host, p);
  return p;
}

const void* CudaWeights::find(const void* host) const {
  if (auto it = matrices_.find(host); it != matrices_.end()) return it->second.data;
  if (auto it = vectors_.find(host); it != vectors_.end()) return it->second;
  return nullptr;
}

}  // namespace kairo::kernels::cuda
