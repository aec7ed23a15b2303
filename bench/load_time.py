#!/usr/bin/env python3
"""Model load time on the CPU: rpt against CTranslate2 on the same synthetic model (and an older
rpt-translate with --before), the way a user meets it: a process started on the model.

    /usr/bin/python3 bench/load_time.py --shapes base,big --compute-types float32,int8 \\
        --threads 1,2 --repeat 3 --before /tmp/old/rpt-translate --cold --json load.json

The models are bench/synthetic_shapes.py's (random float16 weights at a shape, the template's
vocabularies and tokenizers), exported to CTranslate2 by tools/rpt_to_ctranslate2.py: float32,
and int8 stored quantized (CTranslate2's int8 deployment). rpt runs twice at int8: on the float16
file (quantized at load) and as "rpt int8 file" on the same weights stored in int8 (the file
convert_onmt.py --dtype int8 writes: rpt's int8 deployment, what CTranslate2's is measured against). --work DIR keeps them there for the next run. Each (shape, compute type, threads) runs
every engine --repeat times, alternating (the order reversed every other round), each run its
own process on no input:
- process: wall seconds from starting the process to its exit (the load nearly all of it;
  a small Python launcher, the same for both, included): what a server start or a batch job
  pays; CTranslate2's includes starting Python and importing ctranslate2;
- ready: the engine's own clock, rpt-translate --verbose's `load` line (from before the model
  is read to a translator ready) and the CTranslate2 Translator's construction;
- rpt's phases from the same line (map, checksum, convert, quantize, pack, other), medians.
Warm: the model files in the page cache (one untimed run of each engine first). --cold adds a
round with the model files evicted before every run (posix_fadvise DONTNEED on each file of both
engines' model directories: the disk's speed in the figure; the binaries and libraries stay
cached).

Needs torch (random weights), NumPy, ctranslate2 and sentencepiece.
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "bench"))

import compare_ctranslate2 as peer  # noqa: E402  (the engines' runners, shared)
import synthetic_shapes  # noqa: E402  (the models)

PHASES = ("map", "checksum", "convert", "quantize", "pack", "other")
LOAD_LINE = re.compile(r"load ([\d.]+) s: model [\d.]+ s \(map ([\d.]+), checksum ([\d.]+), "
                       r"convert ([\d.]+), quantize ([\d.]+), pack ([\d.]+), other ([\d.]+)\)")


def evict(directory):
    """Drops a model directory's files from the page cache (no root needed)."""
    for path in Path(directory).iterdir():
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def run_rpt(args, binary, compute_type, threads, model_dir):
    """One rpt-translate process on no input: its wall seconds, its load line's figures."""
    command = [binary, "--model", str(model_dir), "--compute-type", compute_type,
               "--threads", str(threads), "--verbose", "--quiet"]
    start = time.perf_counter()
    code, _, err, rss, _ = peer.run_measured(command, os.devnull)
    process_s = time.perf_counter() - start
    if code != 0:
        raise peer.RunFailed(f"{binary} failed ({code}): {err.strip()[-2000:]}")
    found = LOAD_LINE.search(err)  # an rpt-translate from before the line has only the wall time
    run = {"process_s": process_s, "rss_mib": rss, "ready_s": None, "phases": None}
    if found:
        run["ready_s"] = float(found.group(1))
        run["phases"] = dict(zip(PHASES, map(float, found.groups()[1:])))
    return run


def run_ct2(args, ct2_dir, compute_type, threads, work):
    """One CTranslate2 worker process that loads the model and exits."""
    start = time.perf_counter()
    run = peer.run_ct2(args, ct2_dir, compute_type, 1, {"intra": threads, "inter": 1}, "lp0",
                       os.devnull, work, load_only=True)
    return {"process_s": time.perf_counter() - start, "rss_mib": run["rss_mib"],
            "ready_s": run["load_s"], "phases": None}


def median_run(runs):
    """The median of each figure over an engine's runs (phases each alone)."""
    out = {"process_s": statistics.median(r["process_s"] for r in runs),
           "rss_mib": statistics.median(r["rss_mib"] for r in runs), "runs": runs}
    ready = [r["ready_s"] for r in runs if r["ready_s"] is not None]
    out["ready_s"] = statistics.median(ready) if ready else None
    if all(r["phases"] for r in runs):
        out["phases"] = {p: statistics.median(r["phases"][p] for r in runs) for p in PHASES}
    return out


def one_point(args, engines, compute_type, threads, cold):
    """Every engine --repeat times, alternating; {engine: medians}."""
    runs = {name: [] for name, _ in engines}
    for round_ in range(args.repeat):
        for name, run in engines if round_ % 2 == 0 else engines[::-1]:
            if cold:
                for directory in args.evict:
                    evict(directory)
            runs[name].append(run(compute_type, threads))
    return {name: median_run(r) for name, r in runs.items()}


def fmt(seconds):
    return "-" if seconds is None else f"{seconds:.2f}"


HEADER = ("| shape | compute | threads | cache | engine | process s | ready s | peak RSS MiB | "
          "rpt phases s: " + ", ".join(PHASES) + " |\n|---|---|---|---|---|---|---|---|---|")


def rows(point):
    out = []
    for engine, figures in point["engines"].items():
        phases = figures.get("phases")
        out.append(f"| {point['shape']} | {point['compute_type']} | {point['threads']} | "
                   f"{point['cache']} | {engine} | {fmt(figures['process_s'])} | "
                   f"{fmt(figures['ready_s'])} | {figures['rss_mib']:.0f} | "
                   + (" / ".join(f"{phases[p]:.3f}" for p in PHASES) if phases else "-") + " |")
    return out


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--template", default=str(REPO / "models" / "en-de"))
    parser.add_argument("--shapes", default="base,big")
    parser.add_argument("--compute-types", default="float32,int8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--before", help="an older rpt-translate, run beside as 'rpt before'")
    parser.add_argument("--cold", action="store_true",
                        help="also measure with the model files evicted from the page cache")
    parser.add_argument("--work", help="where the models go, kept for the next run (default: a "
                        "temporary folder)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    args.shapes = args.shapes.split(",")
    args.compute_types = args.compute_types.split(",")
    args.threads = [int(t) for t in args.threads.split(",")]
    unknown = [s for s in args.shapes if s not in synthetic_shapes.SHAPES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {list(synthetic_shapes.SHAPES)}")
    # What peer.run_ct2's request carries besides the load (unused by a load-only worker).
    args.device, args.beam_size, args.max_length = "cpu", 1, 1
    return args


def prepared_models(args, shape, work):
    """The shape's rpt directory and CTranslate2 directories by compute type, written unless
    --work already holds them."""
    import rpt_to_ctranslate2

    model_dir = work / shape
    if not (model_dir / "config.json").exists():
        synthetic_shapes.write_model(args.template, shape, model_dir)
    if "int8" in args.compute_types and not (work / f"{shape}.int8" / "config.json").exists():
        synthetic_shapes.write_model(args.template, shape, work / f"{shape}.int8", dtype="int8")
    ct2_dirs = {}
    for compute_type in args.compute_types:
        ct2_dir = work / f"{shape}.ct2.{compute_type}"
        if not (ct2_dir / "model.bin").exists():
            rpt_to_ctranslate2.convert(str(model_dir), str(ct2_dir),
                                       peer.CT2_TYPES[compute_type][0])
        ct2_dirs[compute_type] = ct2_dir
    return model_dir, ct2_dirs


def main(argv=None):
    args = parse_args(argv)
    results = {"cpu": peer.cpu_description(), "repeat": args.repeat, "points": []}
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(dir=args.work) as temp:
        work = Path(args.work) if args.work else Path(temp)
        for shape in args.shapes:
            model_dir, ct2_dirs = prepared_models(args, shape, work)
            args.model = str(model_dir)
            for compute_type in args.compute_types:
                args.evict = [model_dir, ct2_dirs[compute_type]]
                engines = [("rpt", lambda c, t: run_rpt(args, args.rpt_translate, c, t,
                                                        model_dir))]
                if compute_type == "int8":
                    int8_dir = work / f"{shape}.int8"
                    args.evict.append(int8_dir)
                    engines.append(("rpt int8 file", lambda c, t: run_rpt(
                        args, args.rpt_translate, c, t, int8_dir)))
                if args.before:
                    engines.append(("rpt before", lambda c, t: run_rpt(args, args.before, c, t,
                                                                       model_dir)))
                engines.append(("CTranslate2", lambda c, t: run_ct2(args, ct2_dirs[c], c, t,
                                                                    work)))
                for _, run in engines:  # warm-up: page cache, first use
                    run(compute_type, 1)
                for threads in args.threads:
                    for cache in ["warm", "cold"] if args.cold else ["warm"]:
                        point = {"shape": shape, "compute_type": compute_type,
                                 "threads": threads, "cache": cache,
                                 "engines": one_point(args, engines, compute_type, threads,
                                                      cache == "cold")}
                        results["points"].append(point)
                        print("\n".join(rows(point)), flush=True)
                        if args.json:
                            Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
