#!/usr/bin/env python3
"""Capacity of one rpt-server: latency and goodput against offered load, with and without
in-flight batching, with and without the translation cache.

Starts rpt-server on a model (loopback, --threads as asked) once per batching mode (`inflight`,
the default, and `static`: a batch is admitted only into an empty decoder), and sweeps open-loop
load over it with rpt-loadgen: calls of one source sentence each, arriving as a Poisson process
at each offered rate, latency measured from each call's scheduled start (no coordinated
omission). Per rate it keeps p50/p90/p99 latency, throughput, goodput (OK calls per second
answered within --slo-ms) and the status counts. The capacity of a mode is the highest offered
rate at which at least 95% of the calls are answered OK within the objective (the knee of the
goodput curve); the sentences per second per core there size replicas (docs/capacity.md). Its
saturation is the highest offered rate at which the median call still met the objective.

Modes: `inflight` and `static` run with the translation cache off (--cache-size 0), so that
repeats of the input measure decoding; `cached` is `inflight` with the cache on (64 MiB). The
server, and so its cache, lives through all the rates of a mode: later rates meet a warmer cache,
as a long-running server does; the mode's hit ratio comes from /metrics at its end.
--profile zipf draws the calls' sentences from the split with Zipf-distributed popularity (UI
strings repeat: "Cancel", "Save as..."), --profile uniform (the default) cycles through the
shuffled split.

Writes a JSON file (settings, hardware, one row per mode and rate); --plot draws latency and
goodput against offered load into a PNG (matplotlib: Debian python3-matplotlib).

  bench/capacity.py --model models/en-fr --tsv ../shared/data/ui.en-fr.test.tsv \\
      --rates 2,4,6,8,10,12,14,16 --json docs/capacity_en-fr.json
  bench/capacity.py --plot docs/capacity_en-fr.png docs/capacity_en-fr.json
  bench/capacity.py --model models/en-fr --tsv ../shared/data/ui.en-fr.test.tsv --profile zipf \
      --modes inflight,cached --rates 4,8,16,32,64 --json docs/capacity_cache_en-fr.json \
      --plot docs/capacity_cache_en-fr.png
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from compare_ctranslate2 import cpu_description  # lscpu model, count and vector flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOOD_SHARE = 0.95  # capacity: this share of the calls answered OK within the objective


def sources(tsv, limit, seed):
    """Source sentences of a TSV split, shuffled (calls then mix short and long sentences)."""
    with open(tsv, encoding="utf-8") as f:
        lines = [line.split("\t", 1)[0].strip() for line in f]
    lines = [line for line in lines if line]
    random.Random(seed).shuffle(lines)
    return lines[:limit] if limit else lines


def zipf_draws(lines, count, exponent, seed):
    """`count` sentences drawn from `lines` with popularity falling as 1 / rank^exponent."""
    weights = [1.0 / (rank ** exponent) for rank in range(1, len(lines) + 1)]
    return random.Random(seed).choices(lines, weights=weights, k=count)


class Server:
    """rpt-server on loopback, until the with-block ends (SIGTERM, then the drain)."""

    def __init__(self, build, model, args):
        self.work = tempfile.mkdtemp(prefix="rpt_capacity_")
        ready = os.path.join(self.work, "ready.json")
        self.process = subprocess.Popen(
            [os.path.join(build, "server", "rpt-server"), "--model", f"bench={model}",
             "--listen", "127.0.0.1:0", "--metrics-port", "0", "--ready-file", ready,
             "--log-level", "warn", *args])
        for _ in range(600):
            if os.path.exists(ready):
                with open(ready) as f:
                    ports = json.load(f)
                self.port, self.metrics_port = ports["grpc_port"], ports["metrics_port"]
                return
            if self.process.poll() is not None:
                sys.exit(f"rpt-server exited with {self.process.returncode}")
            time.sleep(0.1)
        self.process.kill()
        sys.exit("rpt-server did not start within 60 s")

    def __enter__(self):
        return self

    def metric_sum(self, name):
        """The sum of a metric's samples on /metrics (0 when absent)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics") as reply:
            text = reply.read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith(name + "{") or line.startswith(name + " "))

    def __exit__(self, *exc):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()


def sweep(options, mode, input_path):
    """The rows of one mode's rates, and its cache hit ratio (None with the cache off)."""
    batching = "inflight" if mode == "cached" else mode
    cache_mib = 64 if mode == "cached" else 0
    server_args = ["--threads", str(options.threads), "--compute-type", options.compute_type,
                   "--batching", batching, "--beam-size", str(options.beam_size),
                   "--cache-size", str(cache_mib),
                   "--max-queued-sentences", "100000", "--max-queued-tokens", "100000000"]
    with Server(options.build, options.model, server_args) as server:
        command = [os.path.join(options.build, "client", "rpt-loadgen"),
                   "--server", f"127.0.0.1:{server.port}", "--model", "bench",
                   "--input", input_path, "--rates", options.rates,
                   "--arrivals", "poisson", "--duration", str(options.duration),
                   "--warmup", str(options.warmup), "--timeout", str(options.timeout),
                   "--slo-ms", str(options.slo_ms), "--format", "json"]
        rows = []
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        for line in process.stdout:
            row = json.loads(line)
            row["batching"] = mode
            rows.append(row)
            print(f"{mode:8s} offered {row['offered_rate']:6.2f}/s  "
                  f"goodput {row['goodput']:6.2f}/s  p50 {row['latency_p50'] * 1e3:7.0f} ms  "
                  f"p99 {row['latency_p99'] * 1e3:7.0f} ms  {row['codes']}", file=sys.stderr)
        if process.wait() != 0:
            sys.exit(f"rpt-loadgen exited with {process.returncode}")
        hits = server.metric_sum("rpt_cache_hits_total")
        misses = server.metric_sum("rpt_cache_misses_total")
        return rows, (hits / (hits + misses) if cache_mib and hits + misses else None)


def good_share(row):
    """The share of a run's calls answered OK within the objective."""
    return row["goodput"] * row["seconds"] / row["calls"] if row["calls"] else 0.0


def capacity(rows):
    """The highest offered rate at which GOOD_SHARE of the calls met the objective (0: none)."""
    return max((r["offered_rate"] for r in rows if good_share(r) >= GOOD_SHARE), default=0.0)


def saturation(rows, slo_seconds):
    """The highest offered rate at which the median call still met the objective: beyond it the
    queue grows and most calls wait (every call is still answered, late)."""
    return max((r["offered_rate"] for r in rows if r["latency_p50"] <= slo_seconds), default=0.0)


def summarize(result):
    summary = {}
    for batching in result["modes"]:
        rows = [r for r in result["rows"] if r["batching"] == batching]
        rate = capacity(rows)
        at_capacity = next((r for r in rows if r["offered_rate"] == rate), None)
        summary[batching] = {
            "capacity_calls_per_second": rate,
            "sentences_per_second_per_core": (at_capacity["sentences_per_second"] /
                                              result["settings"]["threads"]
                                              if at_capacity else 0.0),
            "p99_ms_at_capacity": at_capacity["latency_p99"] * 1e3 if at_capacity else None,
            "saturation_calls_per_second": saturation(rows, result["settings"]["slo_ms"] / 1e3),
            "cache_hit_ratio": result.get("cache_hit_ratio", {}).get(batching),
        }
    return summary


def plot(png, result_files):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = []
    for path in result_files:
        with open(path) as f:
            results.append(json.load(f))
        results[-1]["summary"] = summarize(results[-1])
    figure, axes = plt.subplots(len(results), 2, figsize=(10, 3.6 * len(results)), squeeze=False)
    styles = {"inflight": ("tab:blue", "in-flight batching"),
              "static": ("tab:orange", "static batching"),
              "cached": ("tab:green", "in-flight + cache")}
    for (latency, goodput), result in zip(axes, results):
        settings = result["settings"]
        slo = settings["slo_ms"]
        for batching in result["modes"]:
            rows = sorted((r for r in result["rows"] if r["batching"] == batching),
                          key=lambda r: r["offered_rate"])
            color, label = styles[batching]
            offered = [r["offered_rate"] for r in rows]
            for key, style in (("latency_p50", ":"), ("latency_p90", "--"), ("latency_p99", "-")):
                latency.plot(offered, [r[key] * 1e3 for r in rows], style, color=color,
                             marker=".", label=f"{label} {key[-3:]}")
            goodput.plot(offered, [r["goodput"] for r in rows], "-", color=color, marker="o",
                         label=label)
            summary = result["summary"][batching]
            rate = summary["capacity_calls_per_second"]
            if rate:
                for axis in (latency, goodput):
                    axis.axvline(rate, color=color, alpha=0.35, linewidth=3)
            saturated = summary["saturation_calls_per_second"]
            hits = summary.get("cache_hit_ratio")
            goodput.annotate(f"{label}: capacity {rate:g}/s, median within objective up to "
                             f"{saturated:g}/s" + (f", {hits:.0%} cache hits" if hits else ""),
                             xy=(0.02, 0.97 - 0.07 * list(result["modes"]).index(batching)),
                             xycoords="axes fraction", fontsize=6, color=color, va="top")
        top = max(r["offered_rate"] for r in result["rows"])
        goodput.plot([0, top], [0, top], color="grey", linewidth=0.8, label="offered")
        latency.axhline(slo, color="red", linewidth=0.8, label=f"objective {slo:.0f} ms")
        latency.set_yscale("log")
        latency.set_xlabel("offered load (calls/s, 1 sentence each)")
        latency.set_ylabel("latency from scheduled start (ms)")
        goodput.set_xlabel("offered load (calls/s)")
        goodput.set_ylabel(f"goodput (OK within {slo:.0f} ms, calls/s)")
        title = (f"{os.path.basename(settings['model'])} {settings['compute_type']}, beam "
                 f"{settings['beam_size']}, {settings['threads']} threads, "
                 f"{settings.get('profile', 'uniform')} sentences; "
                 f"{result['hardware']['model']}")
        latency.set_title(title, fontsize=8, loc="left")
        latency.legend(fontsize=6, ncol=2)
        goodput.legend(fontsize=7)
        for axis in (latency, goodput):
            axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(png, dpi=80)
    print(f"wrote {png}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="model directory")
    parser.add_argument("--tsv", help="test split: source<TAB>reference per line")
    parser.add_argument("--limit", type=int, default=0, help="sentences used (0: all)")
    parser.add_argument("--rates", default="2,4,6,8,10,12,14,16",
                        help="offered loads in calls per second")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured per rate")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of load before that")
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline per call, seconds")
    parser.add_argument("--slo-ms", type=float, default=1000.0, help="latency objective")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compute-type", default="int8")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--modes", default="inflight,static",
                        help="modes to sweep: inflight, static, cached")
    parser.add_argument("--profile", choices=("uniform", "zipf"), default="uniform",
                        help="which sentences the calls carry (module docstring)")
    parser.add_argument("--zipf-exponent", type=float, default=1.0)
    parser.add_argument("--draws", type=int, default=50000, help="--profile zipf: sentences drawn")
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--plot", help="draw the given JSON results into this PNG")
    parser.add_argument("results", nargs="*", help="with --plot: JSON files from earlier runs")
    options = parser.parse_args()

    if options.plot and options.results:
        plot(options.plot, options.results)
        return
    if not options.model or not options.tsv:
        parser.error("--model and --tsv are needed for a sweep")
    if options.plot and not options.json:
        parser.error("a sweep draws its --plot from its --json: give both")
    lines = sources(options.tsv, options.limit, seed=1)
    split_sentences = len(lines)
    if options.profile == "zipf":
        lines = zipf_draws(lines, options.draws, options.zipf_exponent, seed=2)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        input_path = f.name
    modes = options.modes.split(",")
    result = {
        "settings": {"model": os.path.relpath(os.path.abspath(options.model), REPO),
                     "tsv": os.path.basename(options.tsv), "sentences": split_sentences,
                     "profile": options.profile,
                     "zipf_exponent": options.zipf_exponent if options.profile == "zipf" else None,
                     "distinct_sentences_in_input": len(set(lines)),
                     "rates": options.rates, "duration_s": options.duration,
                     "warmup_s": options.warmup, "timeout_s": options.timeout,
                     "slo_ms": options.slo_ms, "threads": options.threads,
                     "compute_type": options.compute_type, "beam_size": options.beam_size,
                     "texts_per_call": 1, "arrivals": "poisson"},
        "hardware": cpu_description(),
        "modes": modes,
        "rows": [],
        "cache_hit_ratio": {},
    }
    try:
        for mode in modes:
            rows, hit_ratio = sweep(options, mode, input_path)
            result["rows"] += rows
            if hit_ratio is not None:
                result["cache_hit_ratio"][mode] = hit_ratio
    finally:
        os.unlink(input_path)
    result["summary"] = summarize(result)
    print(json.dumps(result["summary"], indent=1))
    if options.json:
        with open(options.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if options.plot:
        plot(options.plot, [options.json])


if __name__ == "__main__":
    main()
