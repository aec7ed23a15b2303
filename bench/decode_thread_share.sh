#!/usr/bin/env bash
# What the scheduler's thread spends its time on while rpt-server is under load: decoder steps,
# encoder batches, and handing finished sentences over (span restoration, detokenizing, the
# call's response), from the server's own histograms (rpt_decode_step_duration_seconds,
# rpt_encode_duration_seconds, rpt_deliver_duration_seconds) scraped before and after
# rpt-loadgen keeps CONCURRENCY single-sentence calls in flight.
#
#   bench/decode_thread_share.sh [MODEL_DIR] [TSV] [LINES] [CONCURRENCY]
#
# Defaults: models/en-de, its test split (first 1,000 lines), 64 calls in flight, beam 4, the
# cache off (every call decodes); SERVER picks the rpt-server binary (default BUILD's). Prints one
# JSON line. Since the hand-over thread (server/scheduler.h) the delivering is no longer on the
# scheduler's thread: its share is then of the two threads' busy time together.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$repo/build}"
model="${1:-$repo/models/en-de}"
tsv="${2:-$repo/../shared/data/ui.en-de.test.tsv}"
lines="${3:-1000}"
concurrency="${4:-64}"
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
head -n "$lines" "$tsv" | cut -f1 > "$work/input.txt"

"${SERVER:-$build/server/rpt-server}" --model "bench=$model" --listen 127.0.0.1:0 --metrics-port 0 \
  --ready-file "$work/ready.json" --max-active-sentences "$concurrency" --cache-size 0 \
  --max-queued-sentences 100000 --max-queued-tokens 10000000 --log-level warn &
server_pid=$!
for _ in $(seq 1 600); do [ -f "$work/ready.json" ] && break; sleep 0.1; done
read -r grpc metrics < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['grpc_port'], r['metrics_port'])" "$work/ready.json")
curl -s "http://127.0.0.1:$metrics/metrics" > "$work/before.txt"
nice -n 19 "$build/client/rpt-loadgen" --server "127.0.0.1:$grpc" --model bench \
  --input "$work/input.txt" --concurrency "$concurrency" > "$work/load.json"
curl -s "http://127.0.0.1:$metrics/metrics" > "$work/after.txt"
kill -TERM "$server_pid"; wait "$server_pid" || true

python3 - "$work/before.txt" "$work/after.txt" "$work/load.json" "$concurrency" <<'PY'
import json, re, sys
def sums(path):
    text = open(path).read()
    value = lambda name: sum(float(v) for v in re.findall(
        r"^" + name + r'\{model="bench"\} ([0-9.e+-]+)$', text, re.M))
    return {stage: (value(f"rpt_{metric}_duration_seconds_sum"),
                    value(f"rpt_{metric}_duration_seconds_count"))
            for stage, metric in [("steps", "decode_step"), ("encoding", "encode"),
                                  ("delivering", "deliver")]}
before, after = sums(sys.argv[1]), sums(sys.argv[2])
load = json.load(open(sys.argv[3]))
seconds = {k: after[k][0] - before[k][0] for k in after}
counts = {k: int(after[k][1] - before[k][1]) for k in after}
total = sum(seconds.values())
print(json.dumps({
    "concurrency": int(sys.argv[4]),
    "sentences_per_second": load.get("sentences_per_second"),
    "seconds": {k: round(v, 3) for k, v in seconds.items()},
    "counts": counts,
    "share_of_thread_busy": {k: round(v / total, 4) for k, v in seconds.items()},
    "us_per_delivery": round(1e6 * seconds["delivering"] / max(1, counts["delivering"]), 1),
    "ms_per_step": round(1e3 * seconds["steps"] / max(1, counts["steps"]), 3)}))
PY
