#!/usr/bin/env python3
"""rpt-server on a device, end to end over its JSON API (bench/gpu_checks.sh, phase server).

Starts rpt-server (tests/server/rpt_server.py's ServerProcess: free loopback ports), sends every
line of SRC as its own call from CONCURRENCY threads (the cache bypassed, so every sentence is decoded, in-flight with the others), and
compares each answer with EXPECTED (rpt-translate's output for the same lines, same model and
compute type: translations do not depend on their batch). Then checks /metrics and that SIGTERM
drains the server to exit 0. Prints one summary line; exits 1 on any difference or failure.

  gpu_server_check.py --server BIN --model en-de=models/en-de --device cuda \
      --compute-type float16 --src en-de.src --expected en-de.float16.b32 --lines 500
"""
import argparse
import concurrent.futures
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "server"))
from rpt_server import ServerProcess  # noqa: E402  (the tests' server on free loopback ports)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--model", required=True, help="NAME=DIR")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--compute-type", default="float16")
    parser.add_argument("--src", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--log", default="rpt-server.log")
    args = parser.parse_args()
    name = args.model.split("=", 1)[0]
    with open(args.src, encoding="utf-8") as f:
        sources = f.read().splitlines()[: args.lines]
    with open(args.expected, encoding="utf-8") as f:
        expected = f.read().splitlines()[: len(sources)]

    os.environ["RPT_SERVER_BINARY"] = args.server
    server = ServerProcess(["--model", args.model, "--device", args.device,
                            "--compute-type", args.compute_type])
    try:
        def translate(text):
            status, _, answer = server.translate(
                json.dumps({"model": name, "texts": [text]}),
                {"Content-Type": "application/json", "Cache-Control": "no-cache"})
            assert status == 200, answer
            return answer["translations"][0]["hypotheses"][0]["text"]

        start = time.time()
        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            answers = list(pool.map(translate, sources))
        seconds = time.time() - start
        metrics = server.request("GET", "/metrics")[2].decode().splitlines()
        requests = sum(float(line.rsplit(" ", 1)[1]) for line in metrics
                       if line.startswith("rpt_requests_total{"))
        device_bytes = [line for line in metrics if line.startswith("rpt_device_memory_bytes")]
        server.signal(signal.SIGTERM)
        code = server.wait_exit(60)
    finally:
        with open(args.log, "w") as log:
            log.write(server.log())
        server.close()
    same = sum(a == e for a, e in zip(answers, expected))
    ok = same == len(sources) and code == 0 and requests >= len(sources)
    print(f"server {name} {args.device} {args.compute_type}: {same}/{len(sources)} calls "
          f"identical to rpt-translate, {len(sources) / seconds:.1f} calls/s from "
          f"{args.concurrency} clients; rpt_requests_total {requests:.0f}; "
          f"{' '.join(device_bytes) or 'no rpt_device_memory_bytes'}; "
          f"drain exit {code}" + ("" if ok else " — FAILED"))
    for answer, want, source in zip(answers, expected, sources):
        if answer != want:
            print(f"  differs: {source!r}: server {answer!r}, offline {want!r}")
            break
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
