#!/usr/bin/env python3
"""rpt vs CTranslate2 on the same rpt model directory, in the same run, on this machine.

No checkpoint needed: the CTranslate2 model is built from the rpt directory's own weights
(tools/rpt_to_ctranslate2.py, tested token-identical greedy outputs in
tests/tools/rpt_to_ctranslate2_test.py). Each engine runs in its own subprocess; the CTranslate2
worker imports ctranslate2, sentencepiece and tools/ct2_text.py only (no torch).

Fair by construction: every engine runs in its best thread layout on the same cores.
- batch > 1 is throughput on N cores (N = the largest of --threads): rpt with each thread count of
  --threads and with N decoders of one thread each (--inter-threads N --threads 1), CTranslate2 with intra_threads=N, inter_threads=1 and with inter_threads=N,
  intra_threads=1 (translate_batch's sub-batches of --batch-size on N translator replicas); each
  engine's fastest layout is its figure.
- batch 1 is latency, one sentence at a time (inter_threads=1): each engine at each thread count of
  --threads, the fastest counts.
- --searches default,lp0: each engine's own default search (rpt stops a sentence when its best
  hypothesis ends, as OpenNMT-py; CTranslate2 with length_penalty 1 decodes on until beam-size
  hypotheses have ended), and the same search for both, length penalty 0.
Every layout of both engines runs --repeat times, alternating (the order reversed every other
round); the tables show each engine's best layout's median translation time (text in, text out,
model loading excluded; rpt-translate's own clock, the same span timed around CTranslate2's
tokenize + translate_batch + detokenize), sentences/s (the headline), target tokens/s with both
outputs re-encoded by the target SentencePiece model, peak RSS (ru_maxrss of each process), BLEU
(sacrebleu), identical outputs and outputs that reached max length. rpt runs with
--no-protect-spans: CTranslate2 has no span protection, so both do the same work. A second table
re-times both best layouts on the sentences that neither sent to max length. The CPU model, its
vector extensions and the kernels each engine runs (rpt's CPU kernels from rpt-translate
--verbose, CTranslate2's CT2_VERBOSE report) head every result.

Python: needs ctranslate2 (4.8.5), sentencepiece, sacrebleu and NumPy. tools/setup.sh installs
them for Debian's /usr/bin/python3.

    /usr/bin/python3 bench/compare_ctranslate2.py --model models/en-fr \\
        --source-tsv ../shared/data/ui.en-fr.test.tsv --limit 1000 \\
        --compute-types float32,int8 --batch-sizes 32,1 --threads 1,2 --searches default,lp0 \\
        --repeat 3 --json en-fr.json

--source FILE [--reference FILE] instead of --source-tsv (source TAB reference). On a GPU
(--device cuda --compute-types float16) the table adds each engine's peak device memory,
sampled with nvidia-smi for the process (CUDA context included, the same way for both).
--long-input N replaces the source by sentences of N tokens (test sentences concatenated) to
compare memory on long inputs.
"""

import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

# compute type -> (CTranslate2 weights on disk, CTranslate2 compute_type): int8 weights are
# stored quantized (CTranslate2's usual deployment; smallest load), computed int8 x float32.
CT2_TYPES = {"float32": (None, "float32"), "int8": ("int8", "int8_float32"),
             "float16": ("float16", "float16"), "bfloat16": ("bfloat16", "bfloat16")}
MAX_LENGTH_SHARE = 0.9  # re-encoding merges a few pieces of a run-away output: count >= 90%
CPU_FLAGS = re.compile(r"^(avx\w*|fma|f16c|amx\w*|\w*vnni\w*)$")


# -- the CTranslate2 worker (its own process, so its RSS is its own) ---------------------------

def ct2_worker(request_path):
    """Translates request["input"] with CTranslate2; writes the texts and the seconds taken.
    With request["load_only"], loads the model and writes the seconds the Translator took."""
    import ctranslate2
    import ct2_text

    request = json.loads(Path(request_path).read_text())
    load_start = time.perf_counter()
    translator = ctranslate2.Translator(request["ct2_dir"], device=request["device"],
                                        compute_type=request["compute_type"],
                                        inter_threads=request["inter_threads"],
                                        intra_threads=request["intra_threads"])
    if request.get("load_only"):
        Path(request["output"]).write_text(json.dumps(
            {"load_s": time.perf_counter() - load_start}))
        return
    spms = ct2_text.tokenizers(request["model"])
    lines = Path(request["input"]).read_text(encoding="utf-8").splitlines()
    start = time.perf_counter()
    texts, tokens = ct2_text.translate_counted(
        translator, spms, lines, beam_size=request["beam_size"],
        max_batch_size=request["batch_size"], max_decoding_length=request["max_length"],
        min_decoding_length=request.get("min_length", 0), max_input_length=0,
        length_penalty=request["length_penalty"])
    seconds = time.perf_counter() - start
    Path(request["output"]).write_text(json.dumps({"texts": texts, "seconds": seconds,
                                                   "tokens": tokens}))


# -- running one engine once -------------------------------------------------------------------

class GpuMemorySampler:
    """Peak GPU memory of one engine process, sampled with nvidia-smi every 20 ms (None off the GPU)."""

    def __init__(self, launcher_pid, enabled):
        self.launcher, self.enabled, self.peak_mib = launcher_pid, enabled, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _pids(self):  # the launcher and the engine it started
        try:
            path = f"/proc/{self.launcher}/task/{self.launcher}/children"
            return {str(self.launcher), *Path(path).read_text().split()}
        except OSError:
            return {str(self.launcher)}

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                      "--format=csv,noheader,nounits"], capture_output=True,
                                     text=True, timeout=5).stdout
            except (OSError, subprocess.TimeoutExpired):
                return
            for line in out.splitlines():
                pid, _, used = line.partition(",")
                if pid.strip() in self._pids() and used.strip().isdigit():
                    self.peak_mib = max(self.peak_mib or 0, int(used))
            self._stop.wait(0.02)

    def __enter__(self):
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self.enabled:
            self._thread.join()


# Peak RSS comes from a small launcher's RUSAGE_CHILDREN: Linux starts an exec'd process's
# ru_maxrss at the RSS of the process it replaced, and a child spawned straight from this
# (large) process would report at least this process's RSS.
LAUNCHER = """import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)"""


def run_measured(command, stdin_path, env=None, gpu=False):
    """(exit code, stdout, stderr, peak RSS MiB, peak GPU MiB) of one child process."""
    with open(stdin_path, "rb") as stdin, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
        process = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER, rss.name, *command],
                                   stdin=stdin, stdout=out, stderr=err, env=env)
        with GpuMemorySampler(process.pid, gpu) as memory:
            process.wait()
        out.seek(0), err.seek(0)
        rss_kib = float(Path(rss.name).read_text() or "nan")
        return (process.returncode, out.read().decode("utf-8"), err.read().decode("utf-8"),
                rss_kib / 1024, memory.peak_mib)


# Length penalty per search: each engine's default, or 0 for both (the same search).
SEARCHES = {"default": {"rpt": None, "ctranslate2": 1.0}, "lp0": {"rpt": 0.0, "ctranslate2": 0.0}}


class RunFailed(Exception):
    """One engine run exited with an error: its layout is dropped from the setting."""


def run_rpt(args, compute_type, batch, layout, search, input_path):
    # One segment per line, as CTranslate2 reads it.
    command = [args.rpt_translate, "--model", args.model, "--split-sentences", "none",
               "--no-protect-spans", "--beam-size", str(args.beam_size), "--batch-size", str(batch),
               "--threads", str(layout["threads"]),
               "--inter-threads", str(layout.get("inter", 1)), "--max-length", str(args.max_length),
               "--device", args.device, "--compute-type", compute_type,
               "--max-input-length", "2048", "--verbose"]
    if getattr(args, "min_length", 0):
        command += ["--min-length", str(args.min_length)]
    command += getattr(args, "rpt_extra", [])
    if SEARCHES[search]["rpt"] is not None:
        command += ["--length-penalty", str(SEARCHES[search]["rpt"])]
    code, out, err, rss, gpu = run_measured(command, input_path, gpu=args.device == "cuda")
    if code != 0:
        raise RunFailed(f"rpt-translate failed ({code}): {err.strip()[-2000:]}")
    seconds = float(re.search(r"tokens in ([0-9.]+) s", err).group(1))
    kernels = re.search(r"CPU kernels: (.*)", err)  # on the GPU: the device it names
    device = re.search(r"batch \d+, (.*) \S+, \d+ CPU threads", err)
    tokens = int(re.search(r"(\d+) target tokens in", err).group(1))
    return {"texts": out.splitlines(), "seconds": seconds, "tokens": tokens, "rss_mib": rss,
            "gpu_mib": gpu, "stderr": err,
            "kernels": (kernels or device).group(1) if (kernels or device) else None}


def run_ct2(args, ct2_dir, compute_type, batch, layout, search, input_path, work, env=None,
            load_only=False):
    request = {"ct2_dir": str(ct2_dir), "model": args.model, "device": args.device,
               "load_only": load_only, "compute_type": CT2_TYPES[compute_type][1],
               "intra_threads": layout["intra"], "inter_threads": layout["inter"],
               "beam_size": args.beam_size,
               "batch_size": batch, "max_length": args.max_length,
               "min_length": getattr(args, "min_length", 0),
               "length_penalty": SEARCHES[search]["ctranslate2"],
               "input": str(input_path), "output": str(work / "ct2_out.json")}
    request_path = work / "ct2_request.json"
    request_path.write_text(json.dumps(request))
    command = [sys.executable, __file__, "--ct2-worker", str(request_path)]
    env = dict(env or os.environ)  # tools/ first, then wherever ctranslate2 was put
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "tools"),
                                                    env.get("PYTHONPATH", "")) if p)
    code, _, err, rss, gpu = run_measured(command, os.devnull, env=env,
                                          gpu=args.device == "cuda")
    if code != 0:
        raise RunFailed(f"CTranslate2 worker failed ({code}): {err.strip()[-2000:]}")
    result = json.loads(Path(request["output"]).read_text())
    return {**result, "rss_mib": rss, "gpu_mib": gpu, "stderr": err}


def layout_name(engine, layout):
    if engine == "rpt":
        inter = layout.get("inter", 1)
        return f"{layout['threads']} thr" + (f" x {inter} decoders" if inter > 1 else "")
    return f"intra {layout['intra']} / inter {layout['inter']}"


def layouts(args, batch):
    """Each engine's thread layouts to try for one batch size (see the module's doc)."""
    cores = max(args.threads)
    rpt = [{"threads": t} for t in args.threads]
    if batch > 1:
        ct2 = [{"intra": cores, "inter": 1}]
        if cores > 1:
            rpt.append({"threads": 1, "inter": cores})
            ct2.append({"intra": 1, "inter": cores})
    else:
        ct2 = [{"intra": t, "inter": 1} for t in args.threads]
    return {"rpt": rpt, "ctranslate2": ct2}


# -- what the machine and the libraries run ----------------------------------------------------

def cpu_description():
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    fields = dict(line.split(":", 1) for line in lscpu.splitlines() if ":" in line)
    flags = fields.get("Flags", "").split()
    return {"model": fields.get("Model name", "?").strip(),
            "cpus": os.cpu_count(), "flags": sorted(f for f in flags if CPU_FLAGS.match(f))}


def rpt_kernels(args, compute_type, input_path):
    """rpt's own report of the kernels it chose for this CPU, or of its GPU (rpt-translate
    --verbose); on the GPU also the warm-up run, as for CTranslate2."""
    return run_rpt(args, compute_type, 1, {"threads": 1}, "default", input_path)["kernels"]


def ct2_isa(args, ct2_dirs, compute_type, input_path, work):
    """CTranslate2's own CT2_VERBOSE report: CPU, selected ISA, GEMM backends, compute type."""
    env = {**os.environ, "CT2_VERBOSE": "1"}
    result = run_ct2(args, ct2_dirs[compute_type], compute_type, 1, {"intra": 1, "inter": 1},
                     "default", input_path, work, env)
    keep = ("CPU:", "Selected ISA", "SGEMM backend", "GEMM_S8 backend", "Selected compute type",
            "GPU", "cuBLAS", "CUDA")
    return [line.split("[info]", 1)[1].strip().lstrip("- ") for line in
            result["stderr"].splitlines() if "[info]" in line and any(k in line for k in keep)]


def libraries(args, compute_types, ct2_dirs, work):
    import ctranslate2

    probe = work / "probe.txt"
    probe.write_text("Open file\nSave the file as %s\n")
    info = {"rpt_kernels": {t: rpt_kernels(args, t, probe) for t in compute_types},
            "ctranslate2": {"version": ctranslate2.__version__,
                            "supported": sorted(ctranslate2.get_supported_compute_types(
                                args.device))}}
    # On the GPU this run is also the warm-up: the first process JIT-compiles CTranslate2's PTX
    # for a GPU newer than the wheel's kernels (kept in CUDA's cache for the timed runs).
    info["ctranslate2"]["verbose"] = {t: ct2_isa(args, ct2_dirs, t, probe, work)
                                      for t in compute_types}
    return info


# -- measuring ---------------------------------------------------------------------------------

def measure(args, ct2_dir, setting, lines, work, tried=None):
    """Every layout of both engines (`tried`, else layouts()) `--repeat` times, alternating (the
    order reversed every other round); {engine: {layout name: [runs]}}."""
    compute_type, batch, search = setting
    input_path = work / f"input_{len(lines)}.txt"
    input_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tried = tried or layouts(args, batch)
    jobs = [("rpt", layout) for layout in tried["rpt"]] + \
           [("ctranslate2", layout) for layout in tried["ctranslate2"]]
    runs, failed = {"rpt": {}, "ctranslate2": {}}, {"rpt": {}, "ctranslate2": {}}
    for repeat in range(args.repeat):
        for engine, layout in (jobs if repeat % 2 == 0 else jobs[::-1]):
            name = layout_name(engine, layout)
            if name in failed[engine]:
                continue
            try:
                if engine == "rpt":
                    run = run_rpt(args, compute_type, batch, layout, search, input_path)
                else:
                    run = run_ct2(args, ct2_dir, compute_type, batch, layout, search,
                                  input_path, work)
            except RunFailed as error:  # a layout that fails is reported, not fatal
                print(f"{engine} {name} failed: {error}", file=sys.stderr, flush=True)
                failed[engine][name] = str(error)
                runs[engine].pop(name, None)
                continue
            runs[engine].setdefault(name, []).append(run)
    for engine, by_layout in runs.items():
        if not by_layout:
            raise RunFailed(f"every {engine} layout failed: {failed[engine]}")
    runs["failed"] = failed
    return runs


def best_layouts(runs):
    """{engine: (layout name, its runs)}: the layout with the lowest median time."""
    return {engine: min(runs[engine].items(),
                        key=lambda item: statistics.median(r["seconds"] for r in item[1]))
            for engine in ("rpt", "ctranslate2")}


def summarize(runs, lines, references, target_spm, max_length):
    """Each engine's best layout: medians plus the outputs' tokens, BLEU and max-length count
    (first run's outputs; a run whose outputs differ from the first is counted as unstable), and
    every layout's median."""
    import sacrebleu

    summary = {}
    for name, (layout, engine_runs) in best_layouts(runs).items():
        texts = engine_runs[0]["texts"]
        tokens = [len(target_spm.encode(text, out_type=str)) for text in texts]
        seconds = statistics.median(run["seconds"] for run in engine_runs)
        gpu = [run["gpu_mib"] for run in engine_runs if run["gpu_mib"] is not None]
        summary[name] = {
            "layout": layout, "seconds": seconds,
            "all_seconds": [run["seconds"] for run in engine_runs],
            "layouts": {name: statistics.median(r["seconds"] for r in layout_runs)
                        for name, layout_runs in runs[name].items()},
            "sentences_per_second": len(lines) / seconds,
            "target_tokens": sum(tokens), "target_tokens_per_second": sum(tokens) / seconds,
            "peak_rss_mib": max(run["rss_mib"] for run in engine_runs),
            "peak_gpu_mib": max(gpu) if gpu else None,
            "at_max_length": [i for i, n in enumerate(tokens) if n >= MAX_LENGTH_SHARE * max_length],
            "bleu": (sacrebleu.corpus_bleu(texts, [references]).score
                     if references is not None else None),
            "unstable_runs": sum(run["texts"] != texts for run in engine_runs[1:]),
            "texts": texts}
    summary["identical"] = sum(a == b for a, b in zip(summary["rpt"]["texts"],
                                                      summary["ctranslate2"]["texts"]))
    summary["failed_layouts"] = runs.get("failed", {})
    return summary


# -- reporting ---------------------------------------------------------------------------------

def fmt_bleu(value):
    return "-" if value is None else f"{value:.2f}"


def header(cpu, libs, args, sentences):
    lines = [f"CPU: {cpu['model']} ({cpu['cpus']} CPUs), flags: {' '.join(cpu['flags'])}"]
    for compute_type, kernels in libs.get("rpt_kernels", {}).items():
        lines.append(f"rpt {compute_type}: {kernels or 'GPU'}")
    lines.append(f"CTranslate2 {libs['ctranslate2']['version']} "
                 f"(supports {', '.join(libs['ctranslate2']['supported'])})")
    for compute_type, report in libs["ctranslate2"].get("verbose", {}).items():
        lines.append(f"CTranslate2 {compute_type}: {'; '.join(report)}")
    lines.append(f"model {args.model}, {sentences} sentences, beam {args.beam_size}, "
                 f"max length {args.max_length}, device {args.device}, thread counts "
                 f"{','.join(map(str, args.threads))}, each engine in its best layout, medians of "
                 f"{args.repeat} alternating runs")
    return lines


def layouts_cell(summary):
    return "; ".join(f"{name} {seconds:.2f}" for name, seconds in summary["layouts"].items())


def main_table(results):
    rows = ["| compute | batch | search | rpt layout | CT2 layout | rpt s | CT2 s | rpt sent/s | "
            "CT2 sent/s | **rpt / CT2** | rpt tok/s | CT2 tok/s | peak RSS rpt / CT2 MiB | "
            "BLEU rpt / CT2 | identical | at max length rpt / CT2 | every layout, median s "
            "(rpt; CT2) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        a, b, n = r["all"]["rpt"], r["all"]["ctranslate2"], r["sentences"]
        memory = f"{a['peak_rss_mib']:.0f} / {b['peak_rss_mib']:.0f}"
        if a["peak_gpu_mib"] is not None:
            memory += f" (GPU {a['peak_gpu_mib']} / {b['peak_gpu_mib']})"
        rows.append(
            f"| {r['compute_type']} | {r['batch']} | {r['search']} | {a['layout']} | "
            f"{b['layout']} | {a['seconds']:.2f} | {b['seconds']:.2f} | "
            f"{a['sentences_per_second']:.1f} | {b['sentences_per_second']:.1f} | "
            f"**{b['seconds'] / a['seconds']:.2f}x** | {a['target_tokens_per_second']:.0f} | "
            f"{b['target_tokens_per_second']:.0f} | {memory} | "
            f"{fmt_bleu(a['bleu'])} / {fmt_bleu(b['bleu'])} | {r['all']['identical']}/{n} | "
            f"{len(a['at_max_length'])} / {len(b['at_max_length'])} | "
            f"{layouts_cell(a)}; {layouts_cell(b)} |")
    return rows


def normal_table(results):
    rows = ["| compute | batch | search | sentences | rpt s | CT2 s | rpt sent/s | CT2 sent/s | "
            "**rpt / CT2** | rpt tok/s | CT2 tok/s |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        normal = r.get("normal")
        if normal is None:
            continue
        a, b = normal["rpt"], normal["ctranslate2"]
        rows.append(
            f"| {r['compute_type']} | {r['batch']} | {r['search']} | {normal['sentences']} | "
            f"{a['seconds']:.2f} | {b['seconds']:.2f} | {a['sentences_per_second']:.1f} | "
            f"{b['sentences_per_second']:.1f} | **{b['seconds'] / a['seconds']:.2f}x** | "
            f"{a['target_tokens_per_second']:.0f} | {b['target_tokens_per_second']:.0f} |")
    return rows


# -- inputs and the whole run ------------------------------------------------------------------

def read_inputs(args):
    if args.source_tsv:
        pairs = [line.split("\t") for line in
                 Path(args.source_tsv).read_text(encoding="utf-8").splitlines()]
        lines, references = [p[0] for p in pairs], [p[1] if len(p) > 1 else "" for p in pairs]
    else:
        lines = Path(args.source).read_text(encoding="utf-8").splitlines()
        references = (Path(args.reference).read_text(encoding="utf-8").splitlines()
                      if args.reference else None)
    if args.limit:
        lines, references = lines[:args.limit], references[:args.limit] if references else None
    return lines, references


def long_inputs(lines, spm, tokens):
    """Sentences of exactly `tokens` pieces, made by concatenating consecutive source lines."""
    pieces = [p for line in lines for p in spm.encode(line, out_type=str)]
    out = []
    for start in range(0, len(pieces) - tokens + 1, tokens):
        out.append(spm.decode(pieces[start:start + tokens]))
        if len(out) == 8:
            break
    return out


def one_setting(args, ct2_dir, setting, lines, references, target_spm, work):
    """The full-input summary and, when some output reached max length, both engines' best
    layouts re-timed on the sentences where neither engine's did."""
    compute_type, batch, search = setting
    # Other jobs on a shared machine show here (and CTranslate2's OpenMP threads, which spin,
    # suffer most from them): the load before the runs goes into the JSON.
    result = {"compute_type": compute_type, "batch": batch, "search": search,
              "sentences": len(lines), "load_before": os.getloadavg()[0]}
    runs = measure(args, ct2_dir, setting, lines, work)
    result["all"] = summarize(runs, lines, references, target_spm, args.max_length)
    excluded = set(result["all"]["rpt"]["at_max_length"] +
                   result["all"]["ctranslate2"]["at_max_length"])
    if excluded and len(excluded) < len(lines):  # (long inputs: every output may reach it)
        keep = [i for i in range(len(lines)) if i not in excluded]
        subset = [lines[i] for i in keep]
        normal_refs = [references[i] for i in keep] if references is not None else None
        best = {engine: [layout for layout in layouts(args, batch)[engine]
                         if layout_name(engine, layout) == result["all"][engine]["layout"]]
                for engine in ("rpt", "ctranslate2")}
        runs = measure(args, ct2_dir, setting, subset, work, tried=best)
        result["normal"] = summarize(runs, subset, normal_refs, target_spm, args.max_length)
        result["normal"]["sentences"] = len(subset)
    return result


def parse_list(text, convert=str):
    return [convert(item) for item in text.split(",") if item]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=str(REPO / "models" / "en-fr"),
                        help="rpt model directory (e.g. models/en-de)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--source-tsv", help="source TAB reference, one pair a line")
    source.add_argument("--source", help="raw source sentences, one a line")
    parser.add_argument("--reference", help="with --source: raw references for BLEU")
    parser.add_argument("--limit", type=int, default=1000,
                        help="first N sentences (0: all); 300-sentence subsets swing the ratio "
                             "by 30%% or more")
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--compute-types", default="float32,int8",
                        help="comma list of float32, int8 (CPU), float16, bfloat16 (GPU)")
    parser.add_argument("--batch-sizes", default="32,1")
    parser.add_argument("--threads", default="1,2",
                        help="CPU thread counts to try; the largest is the cores for batch > 1")
    parser.add_argument("--searches", default="default,lp0",
                        help="default (each engine's own), lp0 (length penalty 0 for both)")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine and setting")
    parser.add_argument("--long-input", type=int, default=0,
                        help="translate up to 8 sentences of this many source tokens instead")
    parser.add_argument("--json", help="also write every figure (and the outputs) here")
    parser.add_argument("--ct2-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.compute_types = parse_list(args.compute_types)
    unknown = [t for t in args.compute_types if t not in CT2_TYPES]
    if unknown:
        parser.error(f"unknown compute type(s): {', '.join(unknown)}")
    args.batch_sizes, args.threads = parse_list(args.batch_sizes, int), parse_list(args.threads, int)
    args.searches = parse_list(args.searches)
    if any(search not in SEARCHES for search in args.searches):
        parser.error(f"--searches takes {', '.join(SEARCHES)}")
    return args


def main(argv=None):
    if "--ct2-worker" in (argv or sys.argv):
        return ct2_worker((argv or sys.argv)[(argv or sys.argv).index("--ct2-worker") + 1])
    args = parse_args(argv)
    import ct2_text
    import rpt_to_ctranslate2

    lines, references = read_inputs(args)
    source_spm, target_spm = ct2_text.tokenizers(args.model)
    if args.long_input:
        lines, references = long_inputs(lines, source_spm, args.long_input), None
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        ct2_dirs = {t: rpt_to_ctranslate2.convert(args.model, str(work / f"ct2_{t}"),
                                                  CT2_TYPES[t][0]) for t in args.compute_types}
        try:
            cpu, libs = cpu_description(), libraries(args, args.compute_types, ct2_dirs, work)
        except RunFailed as error:
            sys.exit(f"the first (probe and warm-up) runs failed: {error}")
        intro = header(cpu, libs, args, len(lines))
        print("\n".join(intro), flush=True)
        results, failures = [], []
        for search in args.searches:
            for compute_type in args.compute_types:
                for batch in args.batch_sizes:
                    try:
                        results.append(one_setting(args, ct2_dirs[compute_type],
                                                   (compute_type, batch, search), lines,
                                                   references, target_spm, work))
                    except RunFailed as error:  # the other settings still run
                        failures.append({"compute_type": compute_type, "batch": batch,
                                         "search": search, "error": str(error)})
                        print(f"{compute_type} batch {batch} {search}: FAILED: {error}",
                              flush=True)
                        continue
                    print(main_table(results[-1:])[-1], flush=True)
                    for engine in ("rpt", "ctranslate2"):
                        for name, error in results[-1]["all"]["failed_layouts"].get(
                                engine, {}).items():
                            print(f"  {engine} {name}: FAILED, left out: {error[:300]}",
                                  flush=True)
    print("\nAll sentences:\n")
    print("\n".join(main_table(results)))
    if any("normal" in r for r in results):
        print(f"\nWithout the sentences that reached max length (re-encoded output >= "
              f"{MAX_LENGTH_SHARE:.0%} of {args.max_length} pieces) in either engine:\n")
        print("\n".join(normal_table(results)))
    elif any(r["all"][e]["at_max_length"] for r in results for e in ("rpt", "ctranslate2")):
        print("\nEvery output that reached max length is in the table above: no subset left.")
    else:
        print("\nNo output reached max length: the table above is the only one.")
    busy = [r["load_before"] for r in results if r["load_before"] > cpu["cpus"] - 0.5]
    if busy:
        print(f"\nWarning: load average up to {max(busy):.1f} on {cpu['cpus']} CPUs before "
              f"{len(busy)} of {len(results)} settings: other jobs competed (CTranslate2's "
              f"spinning OpenMP threads suffer most); measure again on an idle machine.")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"header": intro, "cpu": cpu, "libraries": libs,
             "settings": {k: getattr(args, k) for k in ("model", "device", "beam_size",
                                                       "max_length", "repeat", "limit",
                                                       "long_input", "threads", "searches")},
             "results": results, "failures": failures}, indent=1, ensure_ascii=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
