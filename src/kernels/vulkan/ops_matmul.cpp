// Weights (pieces of whole rows), matmul and get_rows.
#include <algorithm>
#include <cassert>
#include <string>

#include "kernels/vulkan/vk_device_impl.h"

namespace kairo::kernels::vulkan {
namespace {

constexpr int64_t kPrefillTokens = 8;  // TPW of the *_t8 variants
constexpr uint32_t kDecodeRows = 4;    // ROWS of the *_t1 variants (CMakeLists.txt)
constexpr uint32_t kPrefillRows = 2;   // ROWS of the *_t8 variants

// The shader suffix of a weight type, or nullptr when no Vulkan kernel reads it.
const char* type_suffix(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
    case DType::Q4_1: return "q4_1";
    case DType::Q5_0: return "q5_0";
    case DType::Q5_1: return "q5_1";
    case DType::Q4_K: return "q4_k";
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
    case DType::MXFP4: return "mxfp4";
    default: return nullptr;
  }
}

struct MatmulPush {
  uint32_t n_cols, n_blocks, row_bytes, n_rows, row_base, y_row0, y_stride, x_off, y_off, tok0, tok_end;
};

struct GetRowsPush {
  uint32_t n_cols, n_blocks, row_bytes, first_row, n_rows, ids_off, out_off, tok0;
};

}  // namespace

const VulkanDevice::Matrix& VulkanDevice::matrix(const DeviceMatrix& m) const {
  assert((m.span.buffer & kMatrixIdBit) && "not a matrix from this device's upload_matrices");
  const uint32_t idx = m.span.buffer & ~kMatrixIdBit;
  assert(idx < matrices_.size());
  return matrices_[idx];
}

// Each matrix is split into pieces of whole rows no larger than one bindable buffer: a weight beyond
// maxStorageBufferRange (128 MiB on lavapipe) or maxMemoryAllocationSize is several buffers, and matmul/get_rows
// dispatch once per piece.
Result<std::vector<DeviceMatrix>> VulkanDevice::upload_matrices(std::span<const MatrixView> host) {
  std::vector<DeviceMatrix> out;
  out.reserve(host.size());
  for (const MatrixView& v : host) {
    if (type_suffix(v.dtype) == nullptr) {
      return Error{"vulkan: weight type " + std::string(dtype_name(v.dtype)) +
                   " has no Vulkan kernel (supported: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K MXFP4): "
                   "requantize the model (kairo quantize) or run it on the CPU"};
    }
    // The kernels work in 32-value blocks, a float row's last one possibly partial, so the batch-invariant
    // reduction order is the same for every type. 16-bit rows are read as 32-bit words: they must start on one.
    if ((v.dtype == DType::F16 || v.dtype == DType::BF16) && v.n_cols % 2 != 0) {
      return Error{"vulkan: a " + std::string(dtype_name(v.dtype)) + " matrix with " + std::to_string(v.n_cols) +
                   " columns: the Vulkan kernels need an even number; run this model on the CPU"};
    }
    assert(v.packing == 0 && "pass the GGUF-layout view, not a CPU backend's packed copy");
    assert(v.row_bytes >= row_bytes(v.dtype, v.n_cols) && (v.row_bytes % 2 == 0 || v.dtype == DType::MXFP4));
    const uint64_t limit = ctx_->max_allocation();
    if (v.row_bytes > limit) {
      return Error{"vulkan: one weight row of " + std::to_string(v.row_bytes) + " bytes exceeds the " +
                   std::to_string(limit) + "-byte buffer limit of " + ctx_->info.name};
    }
    const int64_t rows_per_piece = static_cast<int64_t>(limit / v.row_bytes);
    Matrix m;
    for (int64_t r0 = 0; r0 < v.n_rows; r0 += rows_per_piece) {
      const int64_t n = std::min(rows_per_piece, v.n_rows - r0);
      const uint64_t bytes = static_cast<uint64_t>(n) * v.row_bytes;
      KAIRO_TRY_ASSIGN(Buffer b, create_buffer(*ctx_, bytes, BufferKind::Device, "a weight matrix"));
      const uint32_t id = add_buffer(b);
      bytes_in_use_ += b.size;
      write_bytes(id, 0, static_cast<const char*>(v.data) + static_cast<uint64_t>(r0) * v.row_bytes, bytes);
      m.pieces.push_back(Piece{r0, n, id});
    }
    DeviceMatrix dm;
    dm.view = v;
    dm.view.data = nullptr;  // the bytes are on the device
    uint32_t idx = static_cast<uint32_t>(matrices_.size());
    if (!free_matrix_ids_.empty()) {
      idx = free_matrix_ids_.back();
      free_matrix_ids_.pop_back();
      matrices_[idx] = std::move(m);
    } else {
      matrices_.push_back(std::move(m));
    }
    dm.span = DeviceSpan{nullptr, kMatrixIdBit | idx, 0};
    out.push_back(dm);
  }
  return out;
}

void VulkanDevice::free_matrices(std::span<const DeviceMatrix> matrices) {
  if (matrices.empty()) return;
  synchronize();  // recorded work may still read them
  for (const DeviceMatrix& dm : matrices) {
    assert((dm.span.buffer & kMatrixIdBit) && "not a matrix from this device's upload_matrices");
    const uint32_t idx = dm.span.buffer & ~kMatrixIdBit;
    assert(idx < matrices_.size());
    Matrix& m = matrices_[idx];
    assert(!m.pieces.empty() && "free_matrices of a matrix already freed");
    for (const Piece& piece : m.pieces) {
      bytes_in_use_ -= buffer(piece.buffer).size;
      release_buffer(piece.buffer);
    }
    m.pieces.clear();
    free_matrix_ids_.push_back(idx);
  }
}

// Numerics::Relaxed takes the exact path: the exact kernels are the only ones here.
void VulkanDevice::matmul(const DeviceMatrix* ws, int n_mats, DeviceSpan x, const DeviceSpan* ys, int64_t n_tokens,
                          Numerics) {
  if (n_tokens <= 0) return;
  const int64_t n_full = n_tokens / kPrefillTokens * kPrefillTokens;
  for (int i = 0; i < n_mats; ++i) {
    const MatrixView& v = ws[i].view;
    const std::string sfx = type_suffix(v.dtype);
    const char* storage = ctx_->byte_storage ? "_s8" : "";  // the device's byte loads where it has them
    const Pipeline& t1 = pipelines_->get("matmul_" + sfx + "_t1" + storage, 3);
    const Pipeline& t8 = pipelines_->get("matmul_" + sfx + "_t8" + storage, 3);
    MatmulPush pc{};
    pc.n_cols = static_cast<uint32_t>(v.n_cols);
    pc.n_blocks = static_cast<uint32_t>((v.n_cols + 31) / 32);
    pc.row_bytes = static_cast<uint32_t>(v.row_bytes);
    pc.y_stride = static_cast<uint32_t>(v.n_rows);
    VkDescriptorBufferInfo b[3];
    b[1] = bind(x, 4, &pc.x_off);
    b[2] = bind(ys[i], 4, &pc.y_off);
    for (const Piece& piece : matrix(ws[i]).pieces) {
      b[0] = VkDescriptorBufferInfo{buffer(piece.buffer).buffer, 0, VK_WHOLE_SIZE};
      pc.n_rows = static_cast<uint32_t>(piece.n_rows);
      pc.y_row0 = static_cast<uint32_t>(piece.first_row);
      // Whole groups of 8 tokens take the prefill variant, the rest the decode one: bit-identical per (t, r).
      const struct {
        const Pipeline* p;
        int64_t t_begin, t_end, tpw;
        uint32_t rows;
      } passes[2] = {{&t8, 0, n_full, kPrefillTokens, kPrefillRows}, {&t1, n_full, n_tokens, 1, kDecodeRows}};
      for (const auto& pass : passes) {
        const int64_t max_tokens = static_cast<int64_t>(kMaxGroups) * pass.tpw;
        for (int64_t t0 = pass.t_begin; t0 < pass.t_end; t0 += max_tokens) {
          const int64_t t1e = std::min(pass.t_end, t0 + max_tokens);
          pc.tok0 = static_cast<uint32_t>(t0);
          pc.tok_end = static_cast<uint32_t>(t1e);
          const auto gy = static_cast<uint32_t>((t1e - t0 + pass.tpw - 1) / pass.tpw);
          const int64_t groups = (piece.n_rows + pass.rows - 1) / pass.rows;
          for (int64_t g0 = 0; g0 < groups; g0 += kMaxGroups) {
            pc.row_base = static_cast<uint32_t>(g0 * pass.rows);
            const auto gx = static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, groups - g0));
            recorder_->dispatch(*pass.p, b, &pc, sizeof(pc), gx, gy);
          }
        }
      }
    }
  }
}

void VulkanDevice::get_rows(const DeviceMatrix& table, DeviceSpan ids, int64_t n, DeviceSpan out) {
  if (n <= 0) return;
  const MatrixView& v = table.view;
  const Pipeline& p =
      pipelines_->get(std::string("get_rows_") + type_suffix(v.dtype) + (ctx_->byte_storage ? "_s8" : ""), 3);
  GetRowsPush pc{};
  pc.n_cols = static_cast<uint32_t>(v.n_cols);
  pc.n_blocks = static_cast<uint32_t>((v.n_cols + 31) / 32);
  pc.row_bytes = static_cast<uint32_t>(v.row_bytes);
  VkDescriptorBufferInfo b[3];
  b[1] = bind(ids, 4, &pc.ids_off);
  b[2] = bind(out, 4, &pc.out_off);
  const uint32_t gx = (pc.n_blocks + 63) / 64;
  for (const Piece& piece : matrix(table).pieces) {
    b[0] = VkDescriptorBufferInfo{buffer(piece.buffer).buffer, 0, VK_WHOLE_SIZE};
    pc.first_row = static_cast<uint32_t>(piece.first_row);
    pc.n_rows = static_cast<uint32_t>(piece.n_rows);
    for (int64_t t0 = 0; t0 < n; t0 += kMaxGroups) {
      pc.tok0 = static_cast<uint32_t>(t0);
      recorder_->dispatch(p, b, &pc, sizeof(pc), gx, static_cast<uint32_t>(std::min<int64_t>(kMaxGroups, n - t0)));
    }
  }
}

}  // namespace kairo::kernels::vulkan
