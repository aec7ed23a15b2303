#!/usr/bin/env bash
# Server vs offline throughput on the same machine, model and sentences (issue 4's benchmark:
# rpt-server at saturating concurrency should reach at least 90% of offline rpt-translate).
#
#   bench/server_throughput.sh [MODEL_DIR] [INPUT] [CONCURRENCY] [BEAM]
#
# Defaults: the shaw_k4 fixture, its test sentences repeated to 2,000 lines, concurrency 64,
# beam 4. BUILD (default build/) holds rpt-translate, rpt-server and rpt-loadgen; COMPUTE_TYPE
# (default float32; int8) is given to both. Prints both
# throughputs and their ratio as JSON lines; record results in docs/PERFORMANCE.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$repo/build}"
model="${1:-$repo/tests/fixtures/shaw_k4/model}"
input="${2:-}"
concurrency="${3:-64}"
beam="${4:-4}"
threads="${THREADS:-0}"
compute_type="${COMPUTE_TYPE:-float32}"
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

if [ -z "$input" ]; then
  # The fixture's golden cases (English sources), repeated.
  python3 - "$repo/tests/fixtures/shaw_k4/golden.json" > "$work/base.txt" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
for case in cases:
    print(case["text"])
PY
  for _ in $(seq 1 80); do cat "$work/base.txt"; done | head -n 2000 > "$work/input.txt"
  input="$work/input.txt"
fi
lines=$(wc -l < "$input")

# Offline: one process, in-flight batching of --batch-size sentences; its --verbose line gives
# the translation time alone (model loading excluded, as it is for the warm server).
"$build/cli/rpt-translate" --model "$model" --beam-size "$beam" --batch-size "$concurrency" \
  --threads "$threads" --compute-type "$compute_type" --verbose < "$input" > "$work/offline.txt" 2> "$work/offline.log"
offline_rate=$(python3 -c "import re,sys; print(re.search(r'([0-9.]+) sentences/s', open(sys.argv[1]).read()).group(1))" "$work/offline.log")

# Server: the same sentences through gRPC, `concurrency` single-text calls in flight.
"$build/server/rpt-server" --model "bench=$model" --listen 127.0.0.1:0 --metrics-port 0 \
  --ready-file "$work/ready.json" --threads "$threads" --compute-type "$compute_type" \
  --max-active-sentences "$concurrency" \
  --max-queued-sentences 100000 --max-queued-tokens 10000000 --log-level warn &
server_pid=$!
for _ in $(seq 1 600); do [ -f "$work/ready.json" ] && break; sleep 0.1; done
port=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['grpc_port'])" "$work/ready.json")
# The load generator shares the machine's cores with the server it measures (a remote client
# would take none of them): at the lowest priority it runs in the server's idle moments rather
# than preempting the engine's threads (on 2 cores, int8: 3-4% more server throughput).
nice -n 19 "$build/client/rpt-loadgen" --server "127.0.0.1:$port" --model bench --input "$input" \
  --concurrency "$concurrency" --beam-size "$beam" > "$work/server.json"
kill -TERM "$server_pid"; wait "$server_pid" || true

python3 - "$lines" "$offline_rate" "$work/server.json" "$concurrency" "$beam" <<'PY'
import json, sys
lines, offline_rate = int(sys.argv[1]), float(sys.argv[2])
server = json.load(open(sys.argv[3]))
print(json.dumps({"offline_sentences_per_second": round(offline_rate, 2)}))
print(json.dumps(server))
print(json.dumps({"server_over_offline": round(server["sentences_per_second"] / offline_rate, 3),
                  "concurrency": int(sys.argv[4]), "beam": int(sys.argv[5]), "sentences": lines}))
PY
