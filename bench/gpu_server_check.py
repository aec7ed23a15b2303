#!/usr/bin/env python3
"""rpt-server on a device, end to end over its JSON API (bench/gpu_checks.sh, phase server).

Starts rpt-server, waits for /readyz, sends every line of SRC as its own call from CONCURRENCY
threads (the cache bypassed, so every sentence is decoded, in-flight with the others), and
compares each answer with EXPECTED (rpt-translate's output for the same lines, same model and
compute type: translations do not depend on their batch). Then checks /metrics and that SIGTERM
drains the server to exit 0. Prints one summary line; exits 1 on any difference or failure.

  gpu_server_check.py --server BIN --model en-de=models/en-de --device cuda \
      --compute-type float16 --src en-de.src --expected en-de.float16.b32 --lines 500
"""
import argparse
import concurrent.futures
import json
import signal
import subprocess
import sys
import time
import urllib.request


def http(port, path, body=None, headers=None, timeout=60):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                     headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read().decode()


def wait_ready(port, server, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"rpt-server exited with {server.returncode} before it was ready")
        try:
            if http(port, "/readyz", timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"rpt-server not ready within {seconds} s")


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
    parser.add_argument("--port", type=int, default=50151)
    parser.add_argument("--http-port", type=int, default=9564)
    parser.add_argument("--log", default="rpt-server.log")
    args = parser.parse_args()
    name = args.model.split("=", 1)[0]
    with open(args.src, encoding="utf-8") as f:
        sources = f.read().splitlines()[: args.lines]
    with open(args.expected, encoding="utf-8") as f:
        expected = f.read().splitlines()[: len(sources)]

    with open(args.log, "w") as log:
        server = subprocess.Popen(
            [args.server, "--model", args.model, "--device", args.device,
             "--compute-type", args.compute_type, "--listen", f"127.0.0.1:{args.port}",
             "--metrics-port", str(args.http_port)],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(args.http_port, server, 120)

        def translate(text):
            body = json.dumps({"model": name, "texts": [text]}).encode()
            status, answer = http(args.http_port, "/v1/translate", body,
                                  {"Content-Type": "application/json",
                                   "Cache-Control": "no-cache"})
            assert status == 200, answer
            return json.loads(answer)["translations"][0]["hypotheses"][0]["text"]

        start = time.time()
        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            answers = list(pool.map(translate, sources))
        seconds = time.time() - start
        same = sum(a == e for a, e in zip(answers, expected))
        metrics = http(args.http_port, "/metrics")[1]
        requests = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                       if line.startswith("rpt_requests_total{"))
        device_bytes = [line for line in metrics.splitlines()
                        if line.startswith("rpt_device_memory_bytes")]
        counted = requests >= len(sources)
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    ok = same == len(sources) and code == 0 and counted
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
