#!/usr/bin/env bash
# End-to-end test of `kairo serve` with the official `openai` and `@anthropic-ai/sdk` npm packages: installs them into
# tests/e2e/node_modules (gitignored) on first use, starts the server on a free port, runs openai_e2e.test.mjs
# (completions, chat), responses_e2e.test.mjs (/v1/responses) and anthropic_e2e.test.mjs (/v1/messages) against it
# with node's test runner, then stops the server with SIGTERM and checks that it exits 0.
#
#   tests/e2e/run_openai_e2e.sh [path/to/kairo] [model.gguf] [device]   (device: cpu by default, or vulkan[:N])
#   KAIRO_E2E_SERVE_ARGS="--speculative ngram" ... adds flags to the server under test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
KAIRO="${1:-$root/build/kairo}"
MODEL="${2:-$root/models/aidreams260K.gguf}"
DEVICE="${3:-cpu}"
[ -x "$KAIRO" ] || { echo "run_openai_e2e: no kairo binary at $KAIRO (build the 'kairo' target)" >&2; exit 1; }
command -v node >/dev/null || { echo "run_openai_e2e: node is not installed" >&2; exit 1; }

if [ ! -f "$here/node_modules/openai/package.json" ] || [ ! -f "$here/node_modules/@anthropic-ai/sdk/package.json" ]; then
  echo "run_openai_e2e: installing the openai and @anthropic-ai/sdk packages into $here/node_modules"
  (cd "$here" && npm install --no-audit --no-fund --no-package-lock --loglevel=error)
fi

log="$(mktemp)"
# A LoRA adapter for the model from `kairo lora synth`, served as e2e-lora (openai_e2e.test.mjs selects it by `model`
# and by the `lora` field, and loads the file again under another name at run time).
lora_dir="$(mktemp -d)"
lora="$lora_dir/e2e-lora.gguf"
"$KAIRO" lora synth "$MODEL" "$lora" --rank 8 --strength 0.5 --seed 1 >/dev/null
export KAIRO_E2E_LORA="$lora"
read -r -a extra_args <<< "${KAIRO_E2E_SERVE_ARGS:-}"
"$KAIRO" serve --model "$MODEL" --device "$DEVICE" --port 0 --served-model-name e2e-model --shutdown-timeout 5 --no-access-log \
  --lora "e2e-lora=$lora" --allow-runtime-lora "${extra_args[@]}" 2>"$log" &
pid=$!
cleanup() { kill -9 "$pid" 2>/dev/null || true; rm -f "$log"; rm -rf "$lora_dir"; }
trap cleanup EXIT

port=""
for _ in $(seq 1 300); do
  if grep -q "kairo serve: ready" "$log"; then
    port="$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)"
    break
  fi
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "run_openai_e2e: kairo serve exited early" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "run_openai_e2e: kairo serve did not become ready" >&2; exit 1; }

status=0
# The multi-model server starts servers of its own: once per device, not again with the speculative flags.
extra_files=""
[ -z "${KAIRO_E2E_SERVE_ARGS:-}" ] && extra_files="$here/multi_model_e2e.test.mjs"
# One file at a time: openai_e2e.test.mjs reads the server's metrics (requests running, KV use, aborts), which another
# file's requests would move.
KAIRO_URL="http://127.0.0.1:$port/v1" KAIRO_EXE="$KAIRO" KAIRO_MODEL="$MODEL" KAIRO_DEVICE="$DEVICE" \
  node --test --test-concurrency=1 "$here/openai_e2e.test.mjs" "$here/responses_e2e.test.mjs" \
  "$here/anthropic_e2e.test.mjs" "$here/embeddings_e2e.test.mjs" $extra_files || status=$?

kill -TERM "$pid"
server_status=0
wait "$pid" || server_status=$?
if [ "$server_status" -ne 0 ]; then
  cat "$log" >&2
  echo "run_openai_e2e: kairo serve exited with $server_status after SIGTERM (expected 0)" >&2
  exit 1
fi
exit "$status"
