#!/usr/bin/env bash
# Cross-builds kairo for 64-bit ARM (preset aarch64: Debian's g++-aarch64-linux-gnu, static binaries) and runs the
# kernel and tensor suites under qemu-user three times: as qemu's "max" CPU (SDOT and I8MM: the SMMLA kernels), as a
# Neoverse N1 (SDOT without I8MM) and as a Cortex-A72 (Armv8.0: the plain NEON kernels). Every kernel is checked against the scalar reference, and
# the row-tile outputs against the bits the x86 paths give (tests/kernels/row_tile_golden_test.cpp).
# Usage: scripts/test-aarch64.sh [--full]   (--full also builds kairo and the engine suite and runs the engine's
# llama.cpp reference tests and the bundled demo model under qemu: about 20 more minutes on 2 cores, so not in CI)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh aarch64
cmake --preset aarch64
targets=(test_kernels test_tensor)
if [ "${1:-}" = "--full" ]; then targets+=(test_engine kairo); fi
cmake --build --preset aarch64 -j "$(nproc)" --target "${targets[@]}"
for cpu in max neoverse-n1 cortex-a72; do
  echo "== kernel and tensor suites under qemu-aarch64 -cpu $cpu"
  QEMU_CPU=$cpu ctest --preset aarch64 -L 'kernels|tensor'
done
if [ "${1:-}" = "--full" ]; then
  echo "== engine reference tests (llama.cpp outputs) under qemu-aarch64"
  ctest --preset aarch64 -R 'Reference'
  echo "== the demo model under qemu-aarch64"
  qemu-aarch64-static build/aarch64/kairo run --model models/aidreams260K.gguf --prompt "I dream" --temperature 0 \
    --max-tokens 24 --stats
fi
