#!/usr/bin/env bash
# The server's throughput with a deep queue against its throughput alone: per decoder step the
# scheduler must not do work that grows with the sentences queued (a scan of the queue every
# step once took 57% of the server's time with 25,000 sentences queued).
#
#   bench/deep_queue.sh [MODEL_DIR] [RATE] [ACTIVE]
#
# Defaults: the shaw_k4 fixture (a tiny model: the scheduler's own cost per step shows), 100
# calls/s, --max-active-sentences 1. Alone: one call at a time, 10 calls of 256 texts (the
# default per-request maximum). Deep: RATE calls/s of 256 texts for one second, open loop,
# queued at once behind each other (RATE x 256 sentences); the queue drains by the last call's
# answer, so sentences / p99 latency is the drain rate. Translation cache off. BUILD (default
# build/) holds rpt-server and rpt-loadgen. Prints both as JSON and their ratio; record results in
# docs/PERFORMANCE.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$repo/build}"
model="${1:-$repo/tests/fixtures/shaw_k4/model}"
rate="${2:-100}"
active="${3:-1}"
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

printf 'Open the file\nSave %%s as\nQuit\nOpen a window\n' > "$work/input.txt"
"$build/server/rpt-server" --model "bench=$model" --listen 127.0.0.1:0 --metrics-port 0 \
  --ready-file "$work/ready.json" --threads 1 --max-active-sentences "$active" --cache-size 0 \
  --max-queued-sentences 1000000 --max-queued-tokens 100000000 --log-level warn &
server_pid=$!
for _ in $(seq 1 600); do [ -f "$work/ready.json" ] && break; sleep 0.1; done
port=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['grpc_port'])" "$work/ready.json")
loadgen=("$build/client/rpt-loadgen" --server "127.0.0.1:$port" --model bench --input "$work/input.txt"
  --texts-per-call 256 --quiet)

"${loadgen[@]}" --concurrency 1 --repeat 64 > /dev/null  # warm-up
"${loadgen[@]}" --concurrency 1 --repeat 640 > "$work/alone.json"
"${loadgen[@]}" --rate "$rate" --arrivals constant --duration 1 --timeout 600 > "$work/deep.json"

python3 - "$work/alone.json" "$work/deep.json" <<'PY'
import json, sys
alone, deep = (json.load(open(path)) for path in sys.argv[1:3])
drain = deep["sentences"] / deep["latency_p99"]
print(json.dumps({"alone_sentences_per_second": round(alone["sentences_per_second"], 1)}))
print(json.dumps({"deep_queue_sentences": deep["sentences"], "codes": deep["codes"],
                  "drained_sentences_per_second": round(drain, 1),
                  "deep_over_alone": round(drain / alone["sentences_per_second"], 3)}))
PY
