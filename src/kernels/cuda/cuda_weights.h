#pragma once
// Weights uploaded once to the device, each in the packed layout the kernels read (packed_layout.h).
//
// Two entry points: upload_matrix() (also behind Backend::pack_weights of cuda_backend()) returns a PackedMatrix
// whose view is the device twin of a host matrix and whose storage owns the device memory; CudaWeights keeps a map
// from host pointer to device copy, so a loader can bind by name on the host and then swap each view (and each norm
// or bias vector) for its device twin, with a tensor uploaded twice (tied embeddings) stored once.
//
// Uploads pack rows on the host into one of two pinned staging buffers while the other one's copy is in flight
// (a copy from pinned memory runs at full link speed; from pageable memory it stages through a driver buffer).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "kernels/backend.h"

namespace kairo::kernels::cuda {

// MatrixView::packing of a device matrix in the CUDA packed layout ("CUDA"): the only kind cuda_backend() takes.
inline constexpr uint32_t kCudaPacking = 0x43554441u;

// Error when the CUDA kernels can't take this matrix (type or shape), before anything is allocated.
Status cuda_check_weight(const MatrixView& host);

// A device copy of a host matrix (GGUF layout) in the packed layout. Errors: unsupported type/shape, out of memory.
Result<PackedMatrix> upload_matrix(const MatrixView& host);

class CudaWeights {
 public:
  Result<MatrixView> upload(const MatrixView& host);
  // A device copy of n host floats (norm weights, biases).
  Result<const float*> upload(const float* host, int64_t n);

  // The device pointer for an uploaded host pointer, or nullptr.
  const void* find(const void* host) const;
  uint64_t n_bytes() const { return n_bytes_; }

 private:
  std::unordered_map<const void*, MatrixView> matrices_;
  std::unordered_map<const void*, const float*> vectors_;
  std::vector<std::shared_ptr<void>> storage_;
  uint64_t n_bytes_ = 0;
};

}  // namespace kairo::kernels::cuda
