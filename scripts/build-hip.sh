#!/usr/bin/env bash
# Compiles the CUDA kernel sources (src/kernels/cuda/*.cu) for AMD GPUs with Debian's hipcc (HIP 5.2) into
# build/hip/libkairo_kernels_hip.a: gfx90a (MI200, CDNA2, wave64) and gfx1030 (RX 6800-6900, RDNA2, wave32), or the
# targets in KAIRO_HIP_ARCHS (semicolon-separated). Compile only: kairo has no AMD GPU to run them on yet, and this
# script never calls `hipcc --version`, which probes for a device.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh hip
archs="${KAIRO_HIP_ARCHS:-gfx90a;gfx1030}"
cmake -S . -B build/hip -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAIRO_HIP=ON -DKAIRO_HIP_ARCHS="$archs" \
  -DKAIRO_VULKAN=OFF -DKAIRO_BUILD_TESTS=OFF >/dev/null
cmake --build build/hip --target kairo_kernels_hip -j"$(nproc)"
echo "HIP build: $(ls build/hip/hip/*.o | wc -l) objects for $archs in build/hip/libkairo_kernels_hip.a"
