#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace kairo::kernels::cpu {
namespace {

#if defined(__x86_64__)
struct Regs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

unsigned long long xgetbv0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

bool bit(unsigned v, int b) { return (v >> b) & 1u; }

// Linux >= 5.16 keeps AMX tile data disabled until the process asks for it.
bool request_amx_permission() {
  constexpr long kArchGetXcompPerm = 0x1022;
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0) return false;
  return (bitmask >> kXfeatureXtiledata) & 1u;
}

CpuFeatures detect() {
  CpuFeatures f;
  const unsigned max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 7) return f;
  const Regs l1 = cpuid(1, 0);
  if (!bit(l1.ecx, 27)) return f;  // OSXSAVE: xgetbv usable
  const unsigned long long xcr0 = xgetbv0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = ymm_state && (xcr0 & 0xE0) == 0xE0;
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;
  const Regs l7 = cpuid(7, 0);
  const Regs l7s1 = cpuid(7, 1);
  f.avx2 = ymm_state && bit(l1.ecx, 28) && bit(l1.ecx, 12) && bit(l1.ecx, 29) && bit(l7.ebx, 5);
  f.avx512 = f.avx2 && zmm_state && bit(l7.ebx, 16) && bit(l7.ebx, 17) && bit(l7.ebx, 30) && bit(l7.ebx, 31) &&
             bit(l7.ecx, 11);
  f.avx512_bf16 = f.avx512 && bit(l7s1.eax, 5);
  f.avx_vnni = f.avx2 && bit(l7s1.eax, 4);
  f.amx = f.avx512 && tile_state && bit(l7.edx, 24) && bit(l7.edx, 25) && request_amx_permission();
  return f;
}
#elif defined(__aarch64__)
CpuFeatures detect() {
  CpuFeatures f;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.neon = (hwcap & HWCAP_ASIMD) && (hwcap & HWCAP_FP);
  f.neon_dot = f.neon && (hwcap & HWCAP_ASIMDDP);
  f.neon_i8mm = f.neon_dot && (getauxval(AT_HWCAP2) & HWCAP2_I8MM);
  return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Amx: return "amx";
    case Isa::Neon: return "neon";
  }
  return "?";
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool isa_supported(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return f.avx2;
    case Isa::Avx512: return f.avx512;
    case Isa::Amx: return f.amx;
    case Isa::Neon: return f.neon;
  }
  return false;
}

Isa best_isa() {
  Isa best = Isa::Scalar;
  for (Isa isa : kAllIsas)
    if (isa_supported(isa)) best = isa;
  if (const char* env = std::getenv("KAIRO_ISA")) {
    for (Isa isa : kAllIsas)
      if (strcasecmp(env, isa_name(isa)) == 0 && isa <= best) return isa;
    if (strcasecmp(env, "avxvnni") == 0 && cpu_features().avx_vnni) return Isa::Avx2;
    if (strcasecmp(env, "neondot") == 0 && cpu_features().neon_dot) return Isa::Neon;
  }
  return best;
}

bool avx2_uses_vnni() {
  const char* env = std::getenv("KAIRO_ISA");
  return cpu_features().avx_vnni && (env == nullptr || strcasecmp(env, "avx2") != 0);
}

bool neon_uses_dot() {
  const char* env = std::getenv("KAIRO_ISA");
  return cpu_features().neon_dot && (env == nullptr || strcasecmp(env, "neon") != 0);
}

bool neon_uses_i8mm() {
  const char* env = std::getenv("KAIRO_ISA");
  return cpu_features().neon_i8mm && (env == nullptr || (strcasecmp(env, "neon") != 0 && strcasecmp(env, "neondot") != 0));
}

const char* kernel_path_name() {
  switch (best_isa()) {
    case Isa::Avx2: return avx2_uses_vnni() ? "avx-vnni" : "avx2";
    case Isa::Neon: return neon_uses_i8mm() ? "neon-i8mm" : neon_uses_dot() ? "neon-sdot" : "neon";
    default: return isa_name(best_isa());
  }
}

}  // namespace kairo::kernels::cpu
