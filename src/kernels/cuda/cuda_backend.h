#pragma once
// The CUDA implementation of the kernel backend table (kernels/backend.h).
//
// CONTRACT (differs from the CPU backends): every pointer the table's functions receive is a DEVICE pointer, and
// every op is only enqueued on CudaContext::get().stream() (results are ready after CudaContext::synchronize() or
// any later stream-ordered copy). Concretely:
//   - MatrixView: uploaded by CudaWeights::upload() — data points at the packed device layout (packed_layout.h),
//     row_bytes == that layout's qs_row_bytes. A host MatrixView passed here is a programmer error.
//   - norm weights and biases: device f32 (CudaWeights::upload(const float*, n)).
//   - activations x, y, q, k, v, out, gate, up: device f32 buffers.
//   - positions, seq_idx, block_tables and sinks (AttentionBatch) and slot_mapping: device arrays. slot < 0 skips the
//     K/V write of that token (padding in a graph bucket); a padding token must still name a valid block table row.
//   - KvLayerView k/v: device memory from DeviceKvPool.
//   - get_row's `row` is a host integer (prefer cuda_get_rows() below, which reads ids from the device: one launch
//     per step and capturable in a graph).
//   - the ThreadPool argument is ignored; RopeParams::freq_factors must be null (CudaDevice::rope takes them).
//   - matmul and attention take the relaxed paths (cuBLAS for many tokens, split attention); CudaDevice honours
//     Numerics::Exact.
// Host code must first check cuda_device_count() > 0; the first call creates the context on device 0.
#include <cstdint>

#include "core/result.h"
#include "kernels/backend.h"

namespace kairo::kernels::cuda {

// The table; valid to call only when a device is present.
const Backend& cuda_backend();

// Ops the model forward needs on a device but the table doesn't have (yet):
// out[i, :] = dequant(table row ids[i]) for n ids in device memory.
void cuda_get_rows(const MatrixView& table, const int32_t* ids, int64_t n, float* out);
// out[r] = argmax of logits[r, :] (device int32), so a greedy step copies back n ints instead of n * n_vocab floats.
void cuda_argmax(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out);

// Checks that this model shape runs on the CUDA kernels (call at load, before uploading).
Status cuda_check_model_shape(int n_heads, int n_kv_heads, int head_dim, DType kv_dtype);

}  // namespace kairo::kernels::cuda
