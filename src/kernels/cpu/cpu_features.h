#pragma once
// Run-time CPU feature detection and the ISA levels kairo has kernels for. On x86-64 detection reads cpuid and xgetbv
// (the OS must have enabled the register state, not just the CPU support it) and, for AMX, asks Linux for permission
// to use the tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)); without that permission the first tile instruction would
// fault. On aarch64 it reads the kernel's hardware capability bits (getauxval(AT_HWCAP)).
namespace kairo::kernels::cpu {

// Ordered within an architecture: each x86 level implies the previous x86 ones, and every level implies Scalar. A CPU
// supports the levels of its own architecture only, so the best supported one is the last in this order.
enum class Isa {
  Scalar,  // the reference kernels
  Avx2,    // AVX2 + FMA + F16C
  Avx512,  // AVX-512 F/BW/VL/DQ + VNNI
  Amx,     // Avx512 + AMX tiles (int8), used by the many-token matmul
  Neon,    // aarch64 Advanced SIMD (every 64-bit ARM CPU); its int8 dots use SDOT where the CPU has it
};
inline constexpr Isa kAllIsas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Amx, Isa::Neon};

const char* isa_name(Isa isa);

struct CpuFeatures {
  bool avx2 = false;    // AVX2 + FMA + F16C with OS-enabled YMM state
  bool avx512 = false;  // F/BW/VL/DQ + VNNI with OS-enabled ZMM state (Cascade Lake, Ice Lake, Zen 4 and later)
  bool avx512_bf16 = false;  // plus AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4): the bf16 roofline only
  bool amx = false;     // AMX-TILE + AMX-INT8, OS-enabled tile state and permission granted to this process
  bool avx_vnni = false;  // AVX-VNNI (vpdpbusd on ymm without AVX-512: Intel Alder Lake and later client cores)
  bool neon = false;      // aarch64 Advanced SIMD with half-precision conversions (all of aarch64)
  bool neon_dot = false;  // plus the dot-product extension, SDOT (Armv8.2+: Graviton 2+, Ampere Altra, Apple M1+)
  bool neon_i8mm = false;  // plus the int8 matrix-multiply extension, SMMLA (Graviton 3+, Neoverse V1/N2, Apple M2+)
};

// Detected once (thread-safe); the AMX permission request happens inside.
const CpuFeatures& cpu_features();

// Whether kernels of this level can run on this CPU.
bool isa_supported(Isa isa);

// The best supported level, lowered by the environment variable KAIRO_ISA (scalar|avx2|avx512|amx|neon) when set, so
// a slower path can be forced for debugging or comparison. An unknown or unsupported value is ignored.
// KAIRO_ISA=avxvnni selects the AVX2 level with its AVX-VNNI dots (where the CPU has them); KAIRO_ISA=neondot the
// NEON level with its SDOT dots but not SMMLA.
Isa best_isa();

// Whether the AVX2 kernels use AVX-VNNI: the CPU has it and KAIRO_ISA is not "avx2" (which forces the plain AVX2
// kernels every AVX2 CPU runs, for comparison).
bool avx2_uses_vnni();

// Whether the NEON kernels use SDOT: the CPU has it and KAIRO_ISA is not "neon" (which forces the plain NEON kernels
// every aarch64 CPU runs, for comparison).
bool neon_uses_dot();

// The kernel family the best level runs, finer than its Isa: "scalar", "avx2", "avx-vnni", "avx512", "amx", "neon",
// "neon-sdot" or "neon-i8mm" (for `kairo devices` and benchmark reports).
const char* kernel_path_name();

// Whether the NEON multi-token kernels use SMMLA: the CPU has it and KAIRO_ISA is neither "neon" nor "neondot".
bool neon_uses_i8mm();

}  // namespace kairo::kernels::cpu
