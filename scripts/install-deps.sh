#!/usr/bin/env bash
# Installs the Debian packages kairo needs to build and test. Idempotent: packages already present are skipped.
# Usage: scripts/install-deps.sh [aarch64|hip]   (aarch64: the cross compiler, qemu-user and the arm64 libraries of
# a multiarch install, for scripts/test-aarch64.sh; hip: Debian's hipcc, for scripts/build-hip.sh)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# Installs those of the given packages that are not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    return 0
  fi
  echo "install-deps: installing ${missing[*]}"
  case " ${missing[*]}" in
    *:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64 ;;
  esac
  $SUDO apt-get update -qq
  if [ "${INSTALL_RECOMMENDS:-0}" = 1 ]; then
    $SUDO apt-get install -y -qq "${missing[@]}"
  else
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

if [ "${1:-}" = "hip" ]; then
  # HIP 5.2 with clang 15 and the ROCm device libraries; no rocBLAS (none in Debian 12). With its recommends: the
  # combination scripts/build-hip.sh was checked with.
  INSTALL_RECOMMENDS=1 install_missing hipcc
  exit 0
fi
if [ "${1:-}" = "aarch64" ]; then
  install_missing g++-aarch64-linux-gnu qemu-user-static libpcre2-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 \
    libssl-dev:arm64
  exit 0
fi
packages=(
  build-essential cmake ninja-build pkg-config
  clang libclang-rt-dev            # libFuzzer and the sanitizer runtimes
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libpcre2-dev
  libboost-dev                     # Boost.Asio / Beast (header-only) for the HTTP server
  libssl-dev openssl               # TLS (OpenSSL through Boost.Asio); the CLI makes the TLS test's certificate
  # The Vulkan backend: loader + headers, the GLSL -> SPIR-V compiler, Mesa's drivers (lavapipe runs Vulkan on the
  # CPU, so the backend's tests run on any machine; radv/anv drive AMD/Intel GPUs) and the Khronos validation layer.
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
  python3-jsonschema               # the independent validator of the JSON Schema grammar tests (tests/grammar)
  python3-yaml                     # reads the deploy kit's manifests and alert rules (tests/deploy)
  chromium                         # the web UI's browser test (tests/webui, driven by puppeteer-core from npm)
)
# Node.js + npm run the end-to-end test with the official `openai` client (the package itself comes from npm).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
install_missing "${packages[@]}"
