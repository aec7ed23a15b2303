#!/usr/bin/env bash
# HTTP/JSON vs gRPC throughput on one rpt-server (issue 17: HTTP at least 0.9x gRPC), at
# CONCURRENCY single-text calls in flight, on a bundled demo model.
#
#   bench/http_vs_grpc.sh [MODEL_DIR] [CONCURRENCY] [LINES]
#
# Defaults: models/en-de, 32 calls in flight, 1,000 lines (the shaw_k4 fixture's golden sentences
# repeated). Both protocols are driven by the same Python harness (bench/http_load.py), in turns
# (gRPC, HTTP, gRPC, HTTP) after a warm-up, against the same warm server; rpt-loadgen's figures
# over both protocols (a C++ client) are printed as a reference. BUILD (default build/) holds the
# binaries.
# Prints JSON lines; record results in docs/PERFORMANCE.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$repo/build}"
model="${1:-$repo/models/en-de}"
concurrency="${2:-32}"
count="${3:-1000}"
python=/usr/bin/python3  # Debian's, with python3-grpcio
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$python" - "$repo/tests/fixtures/shaw_k4/golden.json" "$count" > "$work/input.txt" <<'PY'
import itertools, json, sys
texts = [case["text"] for case in json.load(open(sys.argv[1]))["cases"]]
for text in itertools.islice(itertools.cycle(texts), int(sys.argv[2])):
    print(text)
PY
head -n 64 "$work/input.txt" > "$work/warmup.txt"

"$build/server/rpt-server" --model "bench=$model" --listen 127.0.0.1:0 --metrics-port 0 \
  --ready-file "$work/ready.json" --max-active-sentences "$concurrency" \
  --max-queued-sentences 100000 --max-queued-tokens 10000000 --log-level warn &
server_pid=$!
for _ in $(seq 1 600); do [ -f "$work/ready.json" ] && break; sleep 0.1; done
read -r grpc_port http_port < <("$python" -c "import json,sys; r=json.load(open(sys.argv[1])); \
print(r['grpc_port'], r['metrics_port'])" "$work/ready.json")

port_of() {  # protocol
  if [ "$1" = http ]; then echo "$http_port"; else echo "$grpc_port"; fi
}
load() {  # protocol input
  "$python" "$repo/bench/http_load.py" --protocol "$1" --port "$(port_of "$1")" --model bench \
    --input "$2" --concurrency "$concurrency"
}
load grpc "$work/warmup.txt" > /dev/null
load http "$work/warmup.txt" > /dev/null
for round in 1 2; do
  load grpc "$work/input.txt" | tee -a "$work/grpc.json"
  load http "$work/input.txt" | tee -a "$work/http.json"
done
for protocol in grpc http; do
  "$build/client/rpt-loadgen" --protocol "$protocol" --server "127.0.0.1:$(port_of "$protocol")" \
    --model bench --input "$work/input.txt" --concurrency "$concurrency" --beam-size 4 \
    | tee -a "$work/loadgen.json"
done
echo
kill -TERM "$server_pid"; wait "$server_pid" || true

"$python" - "$work/grpc.json" "$work/http.json" "$concurrency" "$model" <<'PY'
import json, sys
rate = lambda path: [json.loads(line)["sentences_per_second"] for line in open(path)]
grpc, http = rate(sys.argv[1]), rate(sys.argv[2])
print(json.dumps({"http_over_grpc": round(sum(http) / sum(grpc), 3),
                  "grpc_sentences_per_second": grpc, "http_sentences_per_second": http,
                  "concurrency": int(sys.argv[3]), "model": sys.argv[4],
                  "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0]
                         .strip(" :\t"),
                  "cpus": len([l for l in open("/proc/cpuinfo") if l.startswith("processor")])}))
PY
