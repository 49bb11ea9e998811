#pragma once
// Run-time CPU feature detection and the ISA levels kairo has kernels for. Detection reads cpuid and xgetbv (the OS
// must have enabled the register state, not just the CPU support it) and, for AMX, asks Linux for permission to use
// the tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)); without that permission the first tile instruction would fault.
namespace kairo::kernels::cpu {

// Ordered: each level implies the previous ones.
enum class Isa {
  Scalar,  // the reference kernels
  Avx2,    // AVX2 + FMA + F16C
  Avx512,  // AVX-512 F/BW/VL/DQ + VNNI
  Amx,     // Avx512 + AMX tiles (int8), used by the many-token matmul
};
inline constexpr Isa kAllIsas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Amx};

const char* isa_name(Isa isa);

struct CpuFeatures {
  bool avx2 = false;    // AVX2 + FMA + F16C with OS-enabled YMM state
  bool avx512 = false;  // F/BW/VL/DQ + VNNI with OS-enabled ZMM state (Cascade Lake, Ice Lake, Zen 4 and later)
  bool avx512_bf16 = false;  // plus AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4): the bf16 roofline only
  bool amx = false;     // AMX-TILE + AMX-INT8, OS-enabled tile state and permission granted to this process
  bool avx_vnni = false;  // AVX-VNNI (vpdpbusd on ymm without AVX-512: Intel Alder Lake and later client cores)
};

// Detected once (thread-safe); the AMX permission request happens inside.
const CpuFeatures& cpu_features();

// Whether kernels of this level can run on this CPU.
bool isa_supported(Isa isa);

// The best supported level, lowered by the environment variable KAIRO_ISA (scalar|avx2|avx512|amx) when set, so a
// slower path can be forced for debugging or comparison. An unknown or unsupported value is ignored. KAIRO_ISA=avxvnni
// selects the AVX2 level with its AVX-VNNI dots (where the CPU has them).
Isa best_isa();

// Whether the AVX2 kernels use AVX-VNNI: the CPU has it and KAIRO_ISA is not "avx2" (which forces the plain AVX2
// kernels every AVX2 CPU runs, for comparison).
bool avx2_uses_vnni();

}  // namespace kairo::kernels::cpu
