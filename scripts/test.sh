#!/usr/bin/env bash
# Builds kairo (release preset) and runs the whole test suite (CTest + GoogleTest).
# Usage: scripts/test.sh [preset]   (release by default; "asan" runs the suite under ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
./scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
