#!/usr/bin/env bash
# Browser test of the web chat UI (webui.test.mjs): installs puppeteer-core into tests/webui/node_modules (gitignored)
# on first use, makes a LoRA adapter for the model (so /v1/models lists two models and the picker shows), starts
# `kairo serve` with an API key and a template under which the demo model writes text, runs the test in headless
# chromium, then stops the server with SIGTERM and checks that it exits 0.
#
#   tests/webui/run_webui_test.sh [path/to/kairo] [model.gguf] [screenshot.png]
#   CHROMIUM=/path/to/chromium overrides the browser (default: chromium on PATH, scripts/install-deps.sh installs it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
KAIRO="${1:-$root/build/release/kairo}"
MODEL="${2:-$root/models/aidreams260K.gguf}"
SCREENSHOT="${3:-}"
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -x "$KAIRO" ] || { echo "run_webui_test: no kairo binary at $KAIRO (build the 'kairo' target)" >&2; exit 1; }
command -v node >/dev/null || { echo "run_webui_test: node is not installed" >&2; exit 1; }
[ -n "$CHROMIUM" ] || { echo "run_webui_test: chromium is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }

if [ ! -f "$here/node_modules/puppeteer-core/package.json" ]; then
  echo "run_webui_test: installing puppeteer-core into $here/node_modules"
  (cd "$here" && npm install --no-audit --no-fund --no-package-lock --loglevel=error)
fi

tmp="$(mktemp -d)"
log="$tmp/serve.log"
key="sk-webui-$$"
"$KAIRO" lora synth "$MODEL" "$tmp/webui-lora.gguf" --rank 4 --seed 1 >/dev/null
"$KAIRO" serve --model "$MODEL" --port 0 --served-model-name webui-model --lora "webui-lora=$tmp/webui-lora.gguf" \
  --api-key "$key" --chat-template-file "$here/story.jinja" --shutdown-timeout 5 --no-access-log 2>"$log" &
pid=$!
cleanup() { kill -9 "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

port=""
for _ in $(seq 1 300); do
  if grep -q "kairo serve: ready" "$log"; then
    port="$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)"
    break
  fi
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "run_webui_test: kairo serve exited early" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "run_webui_test: kairo serve did not become ready" >&2; exit 1; }

status=0
KAIRO_URL="http://127.0.0.1:$port/" KAIRO_API_KEY="$key" CHROMIUM="$CHROMIUM" WEBUI_SCREENSHOT="$SCREENSHOT" \
  node --test --test-concurrency=1 "$here/webui.test.mjs" || status=$?

kill -TERM "$pid"
server_status=0
wait "$pid" || server_status=$?
if [ "$server_status" -ne 0 ]; then
  cat "$log" >&2
  echo "run_webui_test: kairo serve exited with $server_status after SIGTERM (expected 0)" >&2
  exit 1
fi
[ "$status" -eq 0 ] || cat "$log" >&2
exit "$status"
