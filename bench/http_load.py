#!/usr/bin/env python3
"""Closed-loop load on rpt-server through one protocol: `--concurrency` threads, each with its
own keep-alive connection (HTTP/JSON via http.client) or a shared channel (gRPC via
python3-grpcio), sending one text per call until every line was sent. Prints one JSON line:
sentences/s, calls, errors and latency percentiles. Both protocols share this harness, so the
client's own cost is alike on both sides (bench/http_vs_grpc.sh).

    bench/http_load.py --protocol http --port 9464 --model en-de --input lines.txt --concurrency 32
"""
import argparse
import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "client", "python"))


def http_caller(port, model, beam):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(text):
        body = json.dumps({"model": model, "texts": [text], "options": {"beam_size": beam}})
        connection.request("POST", "/v1/translate", body,
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        return response.status == 200 and json.loads(data)["translations"][0]["hypotheses"]

    return call


def grpc_caller_factory(port, model, beam):
    import grpc
    import translate_client

    pb = translate_client.load_messages()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    translate = channel.unary_unary(
        "/rpt.v1.Translator/Translate",
        request_serializer=pb.TranslateRequest.SerializeToString,
        response_deserializer=pb.TranslateResponse.FromString)

    def make():
        def call(text):
            request = pb.TranslateRequest(model=pb.ModelSelector(model=model),
                                          texts=[text.encode()],
                                          options=pb.DecodingOptions(beam_size=beam))
            try:
                return bool(translate(request, timeout=120).translations[0].hypotheses)
            except grpc.RpcError:
                return False
        return call

    return make


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--protocol", choices=["http", "grpc"], required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=4)
    args = parser.parse_args()
    lines = [line.rstrip("\n") for line in open(args.input, encoding="utf-8") if line.strip()]

    if args.protocol == "http":
        make = lambda: http_caller(args.port, args.model, args.beam_size)  # noqa: E731
    else:
        make = grpc_caller_factory(args.port, args.model, args.beam_size)
    lock = threading.Lock()
    next_line = [0]
    latencies, errors = [], [0]

    def worker():
        call = make()
        while True:
            with lock:
                if next_line[0] >= len(lines):
                    return
                text = lines[next_line[0]]
                next_line[0] += 1
            start = time.monotonic()
            ok = call(text)
            elapsed = time.monotonic() - start
            with lock:
                latencies.append(elapsed)
                errors[0] += 0 if ok else 1

    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - start
    latencies.sort()
    print(json.dumps({
        "protocol": args.protocol, "concurrency": args.concurrency, "calls": len(latencies),
        "errors": errors[0], "seconds": round(seconds, 3),
        "sentences_per_second": round(len(latencies) / seconds, 2),
        "p50_ms": round(latencies[len(latencies) // 2] * 1e3, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1e3, 2)}))
    return 1 if errors[0] else 0


if __name__ == "__main__":
    sys.exit(main())
