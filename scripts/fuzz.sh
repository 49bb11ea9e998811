#!/usr/bin/env bash
# Builds the libFuzzer targets (preset "fuzz": clang, ASan+UBSan) and runs each for a bounded time starting from its
# checked-in seed corpus (tests/fuzz/corpus/<name>/) and dictionary (tests/fuzz/<name>.dict). Any crash, sanitizer
# report, leak, timeout (> 10 s on one input) or memory blow-up (> 2 GB) is a finding: the script prints the
# reproducer and exits nonzero after running the remaining targets.
#
#   scripts/fuzz.sh                    all targets, FUZZ_SECONDS (45) each
#   FUZZ_SECONDS=300 scripts/fuzz.sh gguf tokenizer     longer, selected targets
#   FUZZ_BUILD_DIR=build-fuzz scripts/fuzz.sh          use an already configured build directory instead of the preset's
#
# Reproduce a finding: <build>/tests/fuzz/fuzz_<name> <reproducer file>
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-45}"

if [ -n "${FUZZ_BUILD_DIR:-}" ]; then
  build="$FUZZ_BUILD_DIR"
else
  build=build/fuzz
  cmake --preset fuzz >/dev/null
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for src in tests/fuzz/*_fuzz.cpp; do
    name="$(basename "$src" _fuzz.cpp)"
    targets+=("$name")
  done
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

# Sanitizers report and abort: never recover, so libFuzzer sees every finding as a crash and saves the input.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allocator_may_return_null=0:handle_abort=1:symbolize=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"

work="$build/fuzz-work"
failed=()
for name in "${targets[@]}"; do
  exe="$build/tests/fuzz/fuzz_$name"
  seeds="tests/fuzz/corpus/$name"
  [ "$name" = gguf_mmap ] && seeds=tests/fuzz/corpus/gguf  # same file format, one seed set
  corpus="$work/corpus/$name"       # new inputs go here, never into the source tree
  artifacts="$work/artifacts/$name/"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
        -artifact_prefix="$artifacts")
  [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
  echo "=== fuzz_$name: ${seconds} s"
  log="$work/$name.log"
  if "$exe" "${args[@]}" "$corpus" "$seeds" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "$log" | tr '\n' ' '
    echo
  else
    tail -n 60 "$log"
    failed+=("$name")
    for f in "$artifacts"*; do
      [ -e "$f" ] && echo "REPRODUCER: $f   (run: $exe $f)"
    done
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz findings in: ${failed[*]} (logs and reproducers under $work)"
  exit 1
fi
echo "all ${#targets[@]} fuzz targets ran ${seconds} s each without findings"
