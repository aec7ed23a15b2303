#!/usr/bin/env python3
"""rpt against CTranslate2 at model sizes the demo models do not reach: random weights at
Transformer-base, -big and ~1 B shapes, in a template model's format, vocabularies and
tokenizers, written where the bench runs (nothing large is carried to a GPU machine).

    python3 bench/synthetic_shapes.py --template models/en-de --source SENTENCES \\
        --device cuda --shapes base,big,1b --batches 1,32,128 --precisions float16 \\
        --json out.json --plot docs/synthetic_shapes.png
    python3 bench/synthetic_shapes.py --plot-only docs/gpu_runs/2026-11-28-c-synthetic.json \
        --before docs/gpu_runs/2026-11-28-a-synthetic.json \
        --before docs/gpu_runs/2026-11-28-b-synthetic.json --before-label "before the fix" \
        --plot docs/synthetic_shapes.png     # the figure in docs/PERFORMANCE.md

Both engines read the same weights (tools/rpt_to_ctranslate2.py builds CTranslate2's model from
the rpt directory) and decode exactly --fixed-length pieces per sentence (minimum = maximum
length, so random weights cost what a trained model's outputs of that length would), beam
--beam-size, the same search (length penalty 0). Each (shape, precision, batch) runs both
engines --repeat times, alternating; the figure is the median of each engine's own clock around
text in, text out (model loading excluded), over the pieces each engine reports generating.
Per rpt run the time split rpt-translate --verbose prints (encoding, decoding steps) is kept,
with the decoder weights' bytes over the decoding time per step: the rate a step streams its
weights at, to set against the device's memory bandwidth. --profile adds, per point, one more rpt
run with --gpu-profile in rpt's best layout: each op's GPU time per step (CUDA events, steps run
eagerly).
--gpu-attention key-split,lane-groups measures rpt once per fused attention kernel (a row each);
--inter 1,2 runs both engines with one and two decoders / replicas above batch 1, each engine's
fastest layout its figure.
Peak device memory of each process (nvidia-smi, CUDA context included) on a GPU, peak RSS on the
CPU. --shapes tiny on the CPU is the
dry run CI keeps alive (tests/tools/synthetic_shapes_test.py).

Needs torch (random weights), NumPy, ctranslate2 and sentencepiece.
"""

import argparse
import json
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

# name: (d_model, heads, d_ff, encoder layers, decoder layers)
SHAPES = {
    "tiny": (64, 2, 128, 2, 2),
    "base": (512, 8, 2048, 6, 6),      # ~44 M parameters besides the embeddings
    "big": (1024, 16, 4096, 6, 6),     # ~176 M
    "1b": (2048, 32, 8192, 8, 8),      # ~940 M
}


# -- the model ---------------------------------------------------------------------------------

def dimension_map(config, shape):
    """Template dimension -> the shape's, for every dimension that scales; refuses templates
    whose d_model, d_ff and head size coincide (a tensor's dimensions would be ambiguous)."""
    arch = config["architecture"]
    d, heads, d_ff = shape[:3]
    template = {arch["d_model"]: d, arch["d_ff"]: d_ff,
                arch.get("head_dim", arch["d_model"] // arch["heads"]): d // heads}
    if len(template) != 3:
        raise SystemExit("synthetic_shapes: the template's d_model, d_ff and head size must differ")
    return template


def layer_names(names, stack, layers):
    """The template's tensor names for `stack` with `layers` layers (layer_0's names repeated)."""
    prefix = f"{stack}.layer_0."
    first = [n for n in names if n.startswith(prefix)]
    return [n.replace(prefix, f"{stack}.layer_{i}.", 1) for i in range(layers) for n in first]


def random_tensor(torch, name, shape, generator):
    """Weights N(0, 1/fan_in) (the scale a trained layer keeps activations at), norms at 1 and 0."""
    if name.endswith("gamma"):
        return torch.ones(shape)
    if name.endswith(("beta", "bias")):
        return torch.zeros(shape)
    return torch.randn(shape, generator=generator) * shape[-1] ** -0.5


def write_model(template_dir, shape_name, out_dir, seed=1, dtype="float16"):
    """An rpt model directory at SHAPES[shape_name] with the template's vocabularies, tokenizers,
    position settings and layout, random weights stored in `dtype` (float16, or int8: the linear
    layers quantized per row as convert_onmt.py --dtype int8 writes them). Returns the decoder's
    parameter count (generator included) and the model's."""
    import shutil

    import torch
    import convert_onmt
    import rpt_model

    template_dir, out_dir = Path(template_dir), Path(out_dir)
    config = json.loads((template_dir / "config.json").read_text())
    shape = SHAPES[shape_name]
    dims = dimension_map(config, shape)
    template = rpt_model.read_model_bin(str(template_dir / config["weights"]))
    names = [n for n in template if ".layer_" not in n]
    names += layer_names(template, "encoder", shape[3]) + layer_names(template, "decoder", shape[4])
    generator = torch.Generator().manual_seed(seed)
    tensors, decoder_parameters = [], 0
    for name in names:
        source = template[re.sub(r"layer_\d+", "layer_0", name)]
        tensor = random_tensor(torch, name, [dims.get(n, n) for n in source.shape], generator)
        tensors.append((name, tensor))
        if name.startswith(("decoder.", "generator.")):
            decoder_parameters += tensor.numel()
    out_dir.mkdir(parents=True, exist_ok=True)
    convert_onmt.write_weights(str(out_dir / "model.bin"), tensors, dtype)
    config["converted_from"] = {"tool": "bench/synthetic_shapes.py",
                                "template": config.get("name"), "seed": seed, "dtype": dtype}
    config["name"] = f"synthetic-{shape_name}"
    config["architecture"].update(d_model=shape[0], heads=shape[1], d_ff=shape[2],
                                  encoder_layers=shape[3], decoder_layers=shape[4])
    config["architecture"].pop("head_dim", None)
    convert_onmt.write_config(str(out_dir), config)
    for key in ("source_vocabulary", "target_vocabulary", "source_tokenizer", "target_tokenizer"):
        if key in config:
            shutil.copy(template_dir / config[key], out_dir / config[key])
    if config.get("shared_vocabulary"):
        shutil.copy(template_dir / config["shared_vocabulary"], out_dir)
    return decoder_parameters, sum(t.numel() for _, t in tensors)


# -- running ------------------------------------------------------------------------------------

def time_split(stderr):
    """rpt-translate --verbose's encoding and decoding seconds and step count; on a GPU the
    engine's counted peak memory and the driver's view beside it."""
    found = re.search(r"encoding ([\d.]+) s.*decoding ([\d.]+) s \((\d+) steps, ([\d.]+) rows",
                      stderr)
    graphs = re.search(r"GPU steps: (.*)", stderr)
    engine_peak = re.search(r"peak engine memory ([\d.]+) MiB", stderr)
    driver = re.search(r"device memory \(driver\): (.*)", stderr)
    if not found:
        return None
    return {"encoding_s": float(found.group(1)), "decoding_s": float(found.group(2)),
            "steps": int(found.group(3)), "rows_per_step": float(found.group(4)),
            "gpu_steps": graphs.group(1) if graphs else None,
            "engine_peak_mib": float(engine_peak.group(1)) if engine_peak else None,
            "device_memory": driver.group(1) if driver else None}


BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def summarize(engine_runs):
    """An engine's median run at one point, with every run kept."""
    seconds = statistics.median(r["seconds"] for r in engine_runs)
    tokens = engine_runs[0]["tokens"]
    gpu = [r["gpu_mib"] for r in engine_runs if r["gpu_mib"] is not None]
    return {"seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / max(seconds, 1e-3),
            "peak_gpu_mib": max(gpu) if gpu else None,
            "peak_rss_mib": max(r["rss_mib"] for r in engine_runs), "runs": engine_runs}


def best_layout(runs, engine, inters):
    """The engine's fastest layout (decoders / replicas) by median seconds, summarized, with
    every layout's median under "layouts"."""
    medians = {inter: statistics.median(r["seconds"] for r in runs[(engine, inter)])
               for inter in inters}
    inter = min(inters, key=lambda i: medians[i])
    best = summarize(runs[(engine, inter)])
    best["inter"] = inter
    best["layouts"] = {str(i): m for i, m in medians.items()}
    return best


def rpt_flags(args, kernel):
    """rpt-translate's extra flags for one of --gpu-attention's kernels (a GPU flag only)."""
    return ["--gpu-attention", kernel] if args.device == "cuda" else []


def one_point(args, ct2_dir, precision, batch, lines, work, decoder_parameters):
    """Both engines, alternating, --repeat times, in each layout of --inter (rpt decoders,
    CTranslate2 replicas; batch 1 runs one): each engine's best layout's median and every run.
    rpt runs once per --gpu-attention kernel; point["rpt"] is the first kernel's,
    point["rpt_kernels"] each kernel's."""
    source = work / f"source.b{batch}.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    inters = args.inter if batch > 1 else [1]
    jobs = [(engine, inter) for engine in [*args.gpu_attention, "ctranslate2"] for inter in inters]
    runs = {job: [] for job in jobs}
    for round_ in range(args.repeat):
        for engine, inter in jobs if round_ % 2 == 0 else jobs[::-1]:
            if engine != "ctranslate2":
                args.rpt_extra = rpt_flags(args, engine)
                try:
                    run = peer.run_rpt(args, precision, batch,
                                       {"threads": args.threads, "inter": inter}, "lp0", source)
                finally:
                    args.rpt_extra = []
                run["split"] = time_split(run.pop("stderr"))
            else:
                run = peer.run_ct2(args, ct2_dir, precision, batch,
                                   {"intra": args.threads, "inter": inter}, "lp0", source, work)
                run.pop("stderr")
            run.pop("texts")
            runs[(engine, inter)].append(run)
    point = {"precision": precision, "batch": batch, "sentences": len(lines),
             "ctranslate2": best_layout(runs, "ctranslate2", inters), "rpt_kernels": {}}
    for kernel in args.gpu_attention:
        rpt = best_layout(runs, kernel, inters)
        split = [r["split"] for r in rpt["runs"] if r.get("split")]
        if split and max(s["decoding_s"] for s in split) > 0:
            middle = sorted(split, key=lambda s: s["decoding_s"])[len(split) // 2]
            rpt["split"] = middle
            step_s = middle["decoding_s"] / max(middle["steps"], 1)
            rpt["step_ms"] = step_s * 1e3
            weights = decoder_parameters * BYTES[precision]
            rpt["decoder_weights_gb_per_s"] = weights / step_s / 1e9
        rpt["ratio"] = rpt["tokens_per_s"] / point["ctranslate2"]["tokens_per_s"]
        point["rpt_kernels"][kernel] = rpt
    point["rpt"] = point["rpt_kernels"][args.gpu_attention[0]]
    point["ratio"] = point["rpt"]["ratio"]
    if args.profile:  # one more rpt run, its steps timed op by op (eager, so not in the figures)
        for kernel in args.gpu_attention:
            # In the kernel's best layout: with two decoders each op's time is summed over both
            # decoders' steps (their streams share the GPU, as in the measured runs).
            layout = {"threads": args.threads, "inter": point["rpt_kernels"][kernel]["inter"]}
            args.rpt_extra = ["--gpu-profile", *rpt_flags(args, kernel)]
            try:
                stderr = peer.run_rpt(args, precision, batch, layout, "lp0", source)["stderr"]
            finally:
                args.rpt_extra = []
            point["rpt_kernels"][kernel]["profile"] = [
                line.replace("rpt-translate: ", "") for line in stderr.splitlines()
                if "GPU step profile" in line]
    return point


def warm_up(args, ct2_dir, precision, lines, work):
    """One untimed run of each engine: the first process on a fresh model pays for page cache
    and the GPU's first use (a first CTranslate2 run measured 5x slower than the next)."""
    source = work / "warm_up.txt"
    source.write_text("\n".join(lines[:8]) + "\n", encoding="utf-8")
    peer.run_rpt(args, precision, 8, {"threads": args.threads}, "lp0", source)
    peer.run_ct2(args, ct2_dir, precision, 8, {"intra": args.threads, "inter": 1}, "lp0", source,
                 work)


def row(shape, point, kernel=None):
    rpt, ct2 = point["rpt_kernels"][kernel] if kernel else point["rpt"], point["ctranslate2"]
    memory = (f"{rpt['peak_gpu_mib']} / {ct2['peak_gpu_mib']}" if rpt["peak_gpu_mib"] else
              f"{rpt['peak_rss_mib']:.0f} / {ct2['peak_rss_mib']:.0f} (RSS)")
    split = rpt.get("split") or {}
    step = (f"{rpt['step_ms']:.2f} ms, {rpt['decoder_weights_gb_per_s']:.0f} GB/s"
            if "step_ms" in rpt else "-")
    label = f"{shape}, {kernel}" if kernel else shape
    return (f"| {label} | {point['precision']} | {point['batch']} | {rpt['tokens_per_s']:,.0f} | "
            f"{ct2['tokens_per_s']:,.0f} | {rpt['tokens_per_s'] / ct2['tokens_per_s']:.2f}x | "
            f"{rpt.get('inter', 1)} / {ct2.get('inter', 1)} | {memory} | "
            f"{split.get('encoding_s', 0):.2f} / {split.get('decoding_s', 0):.2f} | {step} |")


HEADER = ("| shape | precision | batch | rpt tok/s | CT2 tok/s | rpt / CT2 | "
          "decoders / replicas | peak MiB rpt / CT2 | rpt encode / decode s | "
          "rpt step, decoder weights streamed |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def best_peer(results, earlier_runs):
    """CTranslate2's figure of each point: the best of this run and the earlier ones (its code
    is the same in all; a single run can be an outlier), the conservative peer for rpt."""
    best = {}
    for run in [results, *earlier_runs]:
        for p in run.get("points", []):
            key = (p["shape"], p["precision"], p["batch"])
            best[key] = max(best.get(key, 0.0), p["ctranslate2"]["tokens_per_s"])
    return best


def plot(results, path, before=None, peers=()):
    """tokens/s against batch, one panel per shape, both engines, one line per precision; with
    `before` (an earlier run's results), its rpt figures as a faint line; CTranslate2's are the
    best of this run, `before` and `peers` (earlier runs' results) at each point."""
    peer_best = best_peer(results, [r for r in (before, *peers) if r])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = list(dict.fromkeys(r["shape"] for r in results["points"]))
    fig, axes = plt.subplots(1, len(shapes), figsize=(4 * len(shapes), 3.4), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        points = [p for p in results["points"] if p["shape"] == shape]
        for precision in dict.fromkeys(p["precision"] for p in points):
            chosen = sorted((p for p in points if p["precision"] == precision),
                            key=lambda p: p["batch"])
            batches = [p["batch"] for p in chosen]
            ax.plot(batches, [p["rpt"]["tokens_per_s"] for p in chosen], "-o",
                    label=f"rpt {precision}")
            ax.plot(batches, [peer_best[(shape, precision, b)] for b in batches], "--s",
                    label=f"CTranslate2 {precision} (best of the runs)")
            earlier = sorted((p for p in (before or {}).get("points", [])
                              if p["shape"] == shape and p["precision"] == precision),
                             key=lambda p: p["batch"])
            if earlier:
                ax.plot([p["batch"] for p in earlier], [p["rpt"]["tokens_per_s"] for p in earlier],
                        ":o", alpha=0.45, label=f"rpt {precision}, {before.get('label', 'before')}")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{shape} (d_model {SHAPES.get(shape, ('?',))[0]})")
        ax.set_xlabel("batch (sentences)")
        ax.set_ylabel("target tokens/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(results.get("device", ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--template", default=str(REPO / "models" / "en-de"))
    parser.add_argument("--source", help="source sentences, one a line (default: the template's "
                        "vocabulary's words, 12 a line)")
    parser.add_argument("--lines", type=int, default=512)
    parser.add_argument("--batch1-lines", type=int, default=64,
                        help="sentences at batch 1 (one at a time is slow at size)")
    parser.add_argument("--shapes", default="base,big")
    parser.add_argument("--batches", default="1,32,128")
    parser.add_argument("--precisions", default="float16")
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of each engine")
    parser.add_argument("--fixed-length", type=int, default=64)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--work", help="where the models go (default: a temporary folder)")
    parser.add_argument("--inter", default="1",
                        help="layouts above batch 1, comma-separated: rpt decoders and "
                             "CTranslate2 replicas (inter_threads) on the device; each engine's "
                             "fastest is its figure")
    parser.add_argument("--gpu-attention", default="key-split",
                        help="rpt's fused attention kernels to measure, comma-separated "
                             "(key-split, lane-groups): rpt runs once per kernel at every point; "
                             "the first one is the figure's")
    parser.add_argument("--profile", action="store_true",
                        help="also run rpt once with --gpu-profile at each point (GPU)")
    parser.add_argument("--deadline", type=float, default=0,
                        help="stop starting new points after this many seconds (0: never)")
    parser.add_argument("--json")
    parser.add_argument("--plot")
    parser.add_argument("--plot-only", help="draw --plot from this JSON and stop")
    parser.add_argument("--before", action="append", default=[],
                        help="with --plot-only: an earlier run's JSON (the first: its rpt line; "
                        "all: CTranslate2's best figure); repeatable")
    parser.add_argument("--before-label", help="what that earlier run was (the legend's words)")
    args = parser.parse_args(argv)
    args.shapes = args.shapes.split(",")
    args.batches = [int(b) for b in args.batches.split(",")]
    args.precisions = args.precisions.split(",")
    args.gpu_attention = args.gpu_attention.split(",")
    args.inter = [int(i) for i in args.inter.split(",")]
    unknown = [s for s in args.shapes if s not in SHAPES]
    if unknown and not args.plot_only:
        parser.error(f"unknown shapes {unknown}; known: {list(SHAPES)}")
    args.max_length = args.min_length = args.fixed_length
    return args


def device_name(device):
    if device == "cpu":
        return f"CPU: {peer.cpu_description().get('model', 'unknown')}"
    import subprocess

    name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip().splitlines()
    return f"GPU: {name[0] if name else 'unknown'}"


def source_lines(args):
    if args.source:
        lines = Path(args.source).read_text(encoding="utf-8").splitlines()
        lines = [line.split("\t")[0] for line in lines if line.strip()]
    else:
        words = [w.lstrip("\u2581") for w in
                 (Path(args.template) / "source_vocab.txt").read_text(encoding="utf-8").split()]
        words = [w for w in words if len(w) > 2 and w.isalpha()]
        lines = [" ".join(words[i:i + 12]).capitalize() + "."
                 for i in range(0, len(words) - 12, 12)]
    return (lines * (args.lines // max(len(lines), 1) + 1))[:args.lines]


def main(argv=None):
    args = parse_args(argv)
    if args.plot_only:
        earlier = [json.loads(Path(path).read_text()) for path in args.before]
        if earlier and args.before_label:
            earlier[0]["label"] = args.before_label
        plot(json.loads(Path(args.plot_only).read_text()), args.plot,
             earlier[0] if earlier else None, earlier[1:])
        return 0
    import ct2_text  # noqa: F401  (fails early where ctranslate2's helpers are missing)
    import rpt_to_ctranslate2

    start = time.monotonic()
    lines = source_lines(args)
    results = {"device": device_name(args.device), "cpu": peer.cpu_description(), "beam_size": args.beam_size,
               "fixed_length": args.fixed_length, "points": [], "skipped": []}
    print(HEADER, flush=True)
    if args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.work) as temp:
        work = Path(temp)
        for shape in args.shapes:
            model_dir = work / shape
            made = time.monotonic()
            decoder_parameters, parameters = write_model(args.template, shape, model_dir)
            args.model = str(model_dir)
            ct2_dirs = {p: rpt_to_ctranslate2.convert(str(model_dir), str(work / f"{shape}.{p}"),
                                                      peer.CT2_TYPES[p][0])
                        for p in args.precisions}
            print(f"{shape}: {parameters / 1e6:.0f} M parameters, written and exported in "
                  f"{time.monotonic() - made:.0f} s", file=sys.stderr, flush=True)
            for precision in args.precisions:
                try:
                    warm_up(args, ct2_dirs[precision], precision, lines, work)
                except peer.RunFailed as error:
                    print(f"{shape} {precision}: warm-up FAILED: {error}", flush=True)
                for batch in args.batches:
                    if args.deadline and time.monotonic() - start > args.deadline:
                        results["skipped"].append({"shape": shape, "precision": precision,
                                                   "batch": batch})
                        continue
                    count = args.batch1_lines if batch == 1 else len(lines)
                    try:
                        point = one_point(args, ct2_dirs[precision], precision, batch,
                                          lines[:count], work, decoder_parameters)
                    except peer.RunFailed as error:
                        print(f"{shape} {precision} batch {batch}: FAILED: {error}", flush=True)
                        results["skipped"].append({"shape": shape, "precision": precision,
                                                   "batch": batch, "error": str(error)})
                        continue
                    point.update(shape=shape, parameters=parameters)
                    results["points"].append(point)
                    for kernel in args.gpu_attention:
                        print(row(shape, point, kernel if args.device == "cuda" else None),
                              flush=True)
                        measured = point["rpt_kernels"][kernel]
                        for line in measured.get("profile", []):
                            print(f"  {shape} batch {batch}, {kernel}: {line}", flush=True)
                        split = measured.get("split") or {}
                        if split.get("device_memory"):
                            print(f"  {shape} batch {batch}, {kernel}: engine peak "
                                  f"{split['engine_peak_mib']} MiB; device memory (driver): "
                                  f"{split['device_memory']}", flush=True)
                    if args.json:
                        Path(args.json).write_text(json.dumps(results, indent=1))
            for directory in [model_dir, *ct2_dirs.values()]:  # the next shape needs the disk
                import shutil
                shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.plot and results["points"]:
        plot(results, args.plot)
    return 0 if results["points"] else 1


if __name__ == "__main__":
    sys.exit(main())
