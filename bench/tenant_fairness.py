#!/usr/bin/env python3
"""Fair sharing under load (server/fair_queue.h): a light tenant's latency alone, then beside a
tenant that floods the server, and, the baseline, beside the same flood on a server without
--api-keys, where one first-come-first-served queue holds both.

Starts rpt-server on a model (loopback, translation cache off, so that repeats decode) with a
keys file of two tenants, `light` and `flood`. The light tenant is rpt-loadgen in a closed loop:
--light-concurrency calls of one sentence in flight over --light-lines sentences of the split,
each sent --light-repeat times, after a warm-up pass.
The flood is rpt-loadgen in an open loop at --flood-rate calls a second of --flood-texts
sentences each, far above what the server decodes: it keeps the admission queue
(--max-queued-sentences) full and is refused past it. Runs, each on a fresh server:

  solo      the light tenant alone;
  fair      the light tenant once the flood has filled the queue (--api-keys: a queue each);
  fifo      the same without --api-keys (one queue, first come first served: the light tenant's
            calls wait behind the flood's backlog, or are refused with it);
  quota     fair, the flood tenant limited to --flood-quota characters a minute: far over its
            quota, it is refused (429 / RESOURCE_EXHAUSTED with Retry-After) past its bucket.

Prints, per run, the light tenant's p50/p90/p99 latency and status codes, the mean queue wait of
both tenants (with keys) and what the server refused of the flood; then per mode the medians
over --rounds, the share of the light tenant's calls answered OK and the ratios to solo.
--json writes it all with the settings and the hardware.

  bench/tenant_fairness.py --model models/en-de --tsv ../shared/data/ui.en-de.test.tsv
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from capacity import REPO, Server, sources  # rpt-server on loopback; a split's sources
from compare_ctranslate2 import cpu_description  # lscpu model, count and vector flags

LIGHT_KEY = "light-0123456789abcdef"
FLOOD_KEY = "flood-0123456789abcdef"


def keys_file(path, light_priority, flood_priority, flood_characters_per_minute=0):
    with open(path, "w") as f:
        f.write(f"tenants:\n"
                f"  - name: light\n    keys: [{LIGHT_KEY}]\n    priority: {light_priority}\n"
                f"  - name: flood\n    keys: [{FLOOD_KEY}]\n    priority: {flood_priority}\n"
                f"    characters_per_minute: {flood_characters_per_minute}\n")


def loadgen(options, server, input_path, key, extra):
    command = [os.path.join(options.build, "client", "rpt-loadgen"),
               "--server", f"127.0.0.1:{server.port}", "--model", "bench", "--input", input_path,
               "--beam-size", str(options.beam_size), *extra]
    if key:
        command += ["--api-key", key]
    # At the server's priority: niced, a client waits for the busy server's threads to yield,
    # and its own delays swamp the latency it measures.
    return command


def run_light(options, server, input_path, key, repeat):
    command = loadgen(options, server, input_path, key,
                      ["--concurrency", str(options.light_concurrency), "--timeout", "300",
                       "--repeat", str(repeat)])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode not in (0, 1):  # 1: some call was not OK (fifo: refused)
        sys.exit(f"rpt-loadgen (light) exited with {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def wait_for_queue(server, depth, seconds):
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if server.metric_sum("rpt_queue_depth_sentences") >= depth:
            return True
        time.sleep(0.2)
    return False


def metric_value(server, name, labels):
    """One series of /metrics, labels as exposed (sorted); 0 when absent."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics") as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith(f"{name}{{{labels}}} "):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def queue_waits(server):
    """{tenant: (sentences admitted, seconds they waited in all)} of the two tenants."""
    return {tenant: tuple(metric_value(server, f"rpt_tenant_queue_duration_seconds_{part}",
                                       f'tenant="{tenant}"') for part in ("count", "sum"))
            for tenant in ("light", "flood")}


def one_run(options, mode, work, light_input, flood_input):
    keyed = mode != "fifo"
    args = ["--threads", str(options.threads), "--compute-type", options.compute_type,
            "--cache-size", "0", "--beam-size", str(options.beam_size),
            "--max-queued-sentences", str(options.max_queued_sentences),
            "--max-active-sentences", str(options.max_active_sentences),
            "--max-segments-per-request", str(min(4096, options.max_queued_sentences))]
    if keyed:
        keys = os.path.join(work, "keys.yaml")
        keys_file(keys, options.light_priority, options.flood_priority,
                  options.flood_quota if mode == "quota" else 0)
        args += ["--api-keys", keys]
    with Server(options.build, options.model, args) as server:
        run_light(options, server, light_input, LIGHT_KEY if keyed else None, 1)  # warm-up
        flood = None
        row = {"mode": mode}
        if mode != "solo":
            flood = subprocess.Popen(
                loadgen(options, server, flood_input, FLOOD_KEY if keyed else None,
                        ["--rate", str(options.flood_rate), "--texts-per-call",
                         str(options.flood_texts), "--duration", "3600", "--quiet",
                         "--timeout", "300"]),
                stdout=subprocess.DEVNULL)
            if mode == "quota":  # its bucket refuses most of it: no backlog to wait for
                time.sleep(2)
            else:  # the flood's backlog first: the light tenant meets a full queue
                row["queue_filled"] = wait_for_queue(server, 0.8 * options.max_queued_sentences,
                                                     60)
        waits_before = queue_waits(server) if keyed else None
        light = run_light(options, server, light_input, LIGHT_KEY if keyed else None,
                          options.light_repeat)
        row["light"] = {k: light[k] for k in ("latency_p50", "latency_p90", "latency_p99",
                                                 "calls", "codes", "seconds")}
        if keyed:
            row["flood_refused"] = sum(
                metric_value(server, "rpt_tenant_queue_refusals_total",
                             f'bound="{bound}",tenant="flood"') for bound in ("queue", "share"))
            row["flood_ok_calls"] = metric_value(server, "rpt_tenant_requests_total",
                                                 'code="OK",tenant="flood"')
            row["flood_over_quota_calls"] = metric_value(
                server, "rpt_tenant_requests_total", 'code="RESOURCE_EXHAUSTED",tenant="flood"')
            # Each tenant's mean wait for the decoder while the light tenant was measured.
            waits = queue_waits(server)
            for tenant in ("light", "flood"):
                count, total = (waits[tenant][i] - waits_before[tenant][i] for i in (0, 1))
                row[f"{tenant}_mean_queue_seconds"] = total / count if count else None
        if flood is not None:
            flood.send_signal(signal.SIGTERM)
            flood.wait()
        return row


def report(row):
    light = row["light"]
    print(f"{row['mode']:5s} light p50 {light['latency_p50'] * 1e3:7.1f} ms  "
          f"p90 {light['latency_p90'] * 1e3:7.1f} ms  p99 {light['latency_p99'] * 1e3:7.1f} ms  "
          f"codes {light['codes']}"
          + (f"  mean queue wait: light {row['light_mean_queue_seconds'] * 1e3:.1f} ms"
             if row.get("light_mean_queue_seconds") is not None else "")
          + (f", flood {row['flood_mean_queue_seconds'] * 1e3:.1f} ms"
             if row.get("flood_mean_queue_seconds") is not None else "")
          + (f"  flood: {row['flood_ok_calls']:.0f} OK, {row['flood_refused']:.0f} refused by "
             f"the queue, {row['flood_over_quota_calls']:.0f} RESOURCE_EXHAUSTED in all"
             if "flood_refused" in row else "")
          + ("  (the flood did not fill the queue: raise --flood-rate)"
             if row.get("queue_filled") is False else ""), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(REPO, "models", "en-de"))
    ap.add_argument("--tsv", default=os.path.join(REPO, "..", "shared", "data",
                                                  "ui.en-de.test.tsv"))
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--threads", type=int, default=0, help="rpt-server --threads (0: all)")
    ap.add_argument("--compute-type", default="float32")
    ap.add_argument("--beam-size", type=int, default=2)
    ap.add_argument("--max-queued-sentences", type=int, default=128)
    ap.add_argument("--max-active-sentences", type=int, default=64, help="decoding at once")
    ap.add_argument("--light-lines", type=int, default=40)
    ap.add_argument("--light-repeat", type=int, default=2, help="times each line is sent")
    ap.add_argument("--light-concurrency", type=int, default=1)
    ap.add_argument("--light-priority", type=int, default=1)
    ap.add_argument("--flood-rate", type=float, default=20, help="flood calls a second")
    ap.add_argument("--flood-texts", type=int, default=8, help="sentences per flood call")
    ap.add_argument("--flood-priority", type=int, default=1)
    ap.add_argument("--flood-quota", type=float, default=300,
                    help="quota mode: the flood tenant's characters_per_minute")
    ap.add_argument("--modes", default="solo,fair,fifo",
                    help="of solo, fair, fifo and quota (fair with the flood's token bucket at "
                    "--flood-quota: it is refused 429 past it)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of every mode, alternating")
    ap.add_argument("--json", help="write the results here")
    options = ap.parse_args()

    lines = sources(options.tsv, 0, seed=1)
    work = tempfile.mkdtemp(prefix="rpt_fairness_")
    light_input = os.path.join(work, "light.txt")
    flood_input = os.path.join(work, "flood.txt")
    with open(light_input, "w") as f:  # the light and the flood translate different sentences
        f.write("\n".join(lines[:options.light_lines]) + "\n")
    with open(flood_input, "w") as f:
        f.write("\n".join(lines[options.light_lines:]) + "\n")

    modes = options.modes.split(",")
    rows = []
    for round_ in range(options.rounds):  # the modes alternate: a noisy machine hits them alike
        for mode in modes:
            row = one_run(options, mode, work, light_input, flood_input)
            row["round"] = round_
            rows.append(row)
            report(row)
    summary = {}
    for mode in modes:  # medians over the rounds
        light = [r["light"] for r in rows if r["mode"] == mode]
        ok = sum(l["codes"].get("OK", 0) for l in light)
        summary[mode] = {p: round(statistics.median(l[f"latency_{p}"] for l in light) * 1e3, 1)
                         for p in ("p50", "p90", "p99")}
        summary[mode]["ok_share"] = round(ok / sum(l["calls"] for l in light), 3)
    if "solo" in summary:
        for mode in modes:
            if mode != "solo":
                for p in ("p50", "p90", "p99"):
                    summary[mode][f"{p}_over_solo"] = round(
                        summary[mode][p] / summary["solo"][p], 2)
    print(json.dumps(summary))
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"settings": vars(options), "cpu": cpu_description(), "runs": rows,
                       "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
