#!/usr/bin/env bash
# GPU acceptance run for the CUDA backend (issue 18), one prepared script for a machine with an NVIDIA GPU:
#   1. configure + build with -DKAIRO_CUDA=ON (build-gpu/, sm_90 only unless KAIRO_CUDA_ARCHS says otherwise)
#   2. host-only CUDA tests, then every kernel and the CUDA device through the device conformance suite
#      (tests/device_ops) against the CPU reference (KAIRO_REQUIRE_GPU=1: a missing device fails instead of
#      skipping; the binary is run directly because ctest caches test discovery)
#   3. the model end to end on the GPU (tests/devices/device_model_test.cpp with KAIRO_TEST_DEVICE=cuda): llama.cpp's
#      reference logits and log-probabilities with the CPU's tolerances, and the engine's batch-invariance tests
#      (CUDA graphs on, as by default: steady decode steps replay)
#   4. `kairo devices`, `kairo bench roofline --device cuda` (device read bandwidth), the decode GEMV bench, then
#      `kairo bench model --device cuda` on `kairo synth llama-3.1-8b` in Q8_0, Q4_K_M and BF16 (decode GB/s and %
#      of the measured bandwidth) and `kairo bench batch --device cuda` at 1/16/64 sequences
#   5. where the machine has Vulkan (libvulkan-dev + glslc, the NVIDIA driver's ICD): the Vulkan suite on the GPU and
#      `kairo bench roofline|model --device vulkan` (decode GB/s against the GPU's measured read bandwidth)
# Budget: about 8 minutes on an H200 (the build is most of it); every step runs under `timeout`.
# Exit status: nonzero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
build="${KAIRO_GPU_BUILD:-build-gpu}"
archs="${KAIRO_CUDA_ARCHS:-90-real}"
jobs="$(nproc)"
failed=()
step() { echo; echo "=== $1 ($(( $(date +%s) - start )) s)"; }
run() {  # run NAME SECONDS CMD...: records a failure instead of stopping, so one report covers everything
  local name="$1" secs="$2"
  shift 2
  if ! timeout --kill-after=10 "$secs" "$@"; then
    echo "FAILED: $name (exit $?)"
    failed+=("$name")
  fi
}

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "nvidia-smi not available"

step "configure + build ($build, CUDA archs $archs, -j$jobs)"
vulkan=OFF
if command -v glslc >/dev/null && pkg-config --exists vulkan 2>/dev/null; then vulkan=ON; fi
if ! timeout 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAIRO_CUDA=ON -DKAIRO_BUILD_TESTS=ON \
    -DKAIRO_CUDA_ARCHS="$archs" -DKAIRO_VULKAN="$vulkan" >/dev/null; then
  echo "FAILED: configure"; exit 1
fi
targets=(test_kernels_cuda_host test_kernels_cuda_device cuda_decode_bench kairo test_devices)
if [ "$vulkan" = ON ]; then targets+=(test_kernels_vulkan); fi
if ! timeout 300 cmake --build "$build" --target "${targets[@]}" -j "$jobs"; then
  echo "FAILED: build"; exit 1
fi

step "CUDA host-only tests"
run host-tests 60 "$build/tests/kernels_cuda/test_kernels_cuda_host" --gtest_brief=1

step "CUDA kernels and the CUDA device (conformance suite) vs the CPU reference"
run device-tests 180 env KAIRO_REQUIRE_GPU=1 "$build/tests/kernels_cuda/test_kernels_cuda_device" --gtest_brief=1

step "the model on the GPU: llama.cpp references and batch invariance (KAIRO_TEST_DEVICE=cuda)"
# MXFP4 (gpt-oss's expert type) has no CUDA kernel yet: that file is refused at load with a message (not run here).
run device-model 240 env KAIRO_TEST_DEVICE=cuda "$build/tests/devices/test_devices" --gtest_brief=1 \
  --gtest_filter='Device*:OpenDevice*:ListDevices*:-*MXFP4*'

kairo="$build/kairo"
step "devices and read bandwidth"
run devices 30 "$kairo" devices
run roofline-cuda 60 "$kairo" bench roofline --device cuda --buffer-mb 1024

step "decode GEMV bandwidth: all matmul weights of a 1B / 8B model per token, replayed as a CUDA graph"
run decode-bench 150 "$build/tests/kernels_cuda/cuda_decode_bench" 1b 8b --types Q8_0,F16,BF16,Q4_K --iters 20

step "kairo bench model / batch --device cuda on synthetic llama-3.1-8b models"
tmp="$(mktemp -d)"
for type in Q8_0 Q4_K_M BF16; do
  model="$tmp/llama-3.1-8b-$type.gguf"
  if run "synth-$type" 150 "$kairo" synth llama-3.1-8b "$model" --type "$type" \
      --tokenizer-from models/aidreams260K.gguf; then
    run "bench-model-$type" 120 "$kairo" bench model --device cuda --model "$model" --pp 512 --tg 128 --reps 2
    if [ "$type" = Q4_K_M ]; then
      # What replaying decode steps as CUDA graphs buys: the same decode with every launch eager.
      run "bench-model-$type-no-graphs" 120 "$kairo" bench model --device cuda --no-cuda-graphs --model "$model" \
        --pp 0 --tg 128 --reps 2
      run "bench-batch-$type" 180 "$kairo" bench batch --device cuda --model "$model" --batch 1,16,64 \
        --prompt 128 --gen 64
    fi
  fi
  rm -f "$model"
done
rm -rf "$tmp"

step "Vulkan on the GPU"
if [ "$vulkan" = ON ]; then
  "$build/kairo" devices
  run vulkan-kernels 120 env KAIRO_VULKAN_VALIDATION=1 "$build/tests/kernels_vulkan/test_kernels_vulkan" --gtest_brief=1
  run vulkan-model 120 env KAIRO_VULKAN_VALIDATION=1 "$build/tests/devices/test_devices" --gtest_brief=1
  run vulkan-roofline 60 "$build/kairo" bench roofline --device vulkan
  tmp="$(mktemp -d)"
  for type in Q4_0 Q8_0; do
    run "vulkan-synth-$type" 120 "$build/kairo" synth tinyllama-1.1b "$tmp/tl-$type.gguf" --type "$type" \
      --tokenizer-from models/aidreams260K.gguf &&
      run "vulkan-bench-$type" 120 "$build/kairo" bench model --device vulkan --model "$tmp/tl-$type.gguf" \
        --pp 512 --tg 128 --reps 2
    rm -f "$tmp/tl-$type.gguf"
  done
  rm -rf "$tmp"
else
  echo "NOT RUN: no Vulkan SDK here (apt-get install libvulkan-dev glslc): the Vulkan backend was not built"
fi

step "done"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all GPU checks passed"
