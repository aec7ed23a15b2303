#!/usr/bin/env python3
"""Where a GPU decode's time goes, step by step of the work on the CUDA engine: the
`time:` lines rpt-translate --verbose prints (bench/gpu_checks.sh keeps them in its summary),
for one run in each of several GPU sessions' outputs, as stacked bars (PNG) and JSON.

  python3 bench/gpu_time_split.py            # the 2026-11-26 H200 runs in docs/gpu_runs/

Each input is (label, file, the line that names the run); the `time:` line follows it (or the
line after the run's sentences/s line).
"""
import argparse
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "docs" / "gpu_runs"
DEFAULT = [
    ("kernel by kernel", "2026-11-26-a-graphs.txt", "-- en-de float16 batch 32 graphs off"),
    ("+ CUDA graphs", "2026-11-26-a-graphs.txt", "-- en-de float16 batch 32 graphs on"),
    ("+ 16-byte key loads", "2026-11-26-b-key-loads.txt", "en-de.float16.b32:"),
    ("+ 4 warps per head", "2026-11-26-c-split-attention.txt", "en-de.float16.b32:"),
]
STAGES = ["preparing", "encoding", "decoding", "results", "output"]


def parse(path, marker):
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(marker))
    tokens_per_second = None
    for line in lines[start:start + 4]:
        found = re.search(r"([\d.]+) target tokens/s", line)
        if found and tokens_per_second is None:
            tokens_per_second = float(found.group(1))
        if "time:" in line:
            seconds = {stage: float(re.search(stage + r" ([\d.]+) s", line).group(1))
                       for stage in STAGES}
            steps = re.search(r"\((\d+) steps, ([\d.]+) rows each\)", line)
            calls = re.search(r"\((\d+) calls", line)
            return {"seconds": seconds, "target_tokens_per_s": tokens_per_second,
                    "steps": int(steps.group(1)), "rows_per_step": float(steps.group(2)),
                    "encoder_calls": int(calls.group(1))}
    raise ValueError(f"{path}: no time line after {marker!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "docs" / "gpu_time_split"))
    args = parser.parse_args()
    runs = [{"label": label, "file": file, **parse(RUNS / file, marker)}
            for label, file, marker in DEFAULT]
    Path(args.out + ".json").write_text(json.dumps(runs, indent=1) + "\n")

    fig, ax = plt.subplots(figsize=(7.5, 2.9), dpi=100)
    colours = {"preparing": "#bbbbbb", "encoding": "#4c72b0", "decoding": "#dd8452",
               "results": "#55a868", "output": "#8172b3"}
    for y, run in enumerate(runs):
        left = 0.0
        for stage in STAGES:
            width = run["seconds"][stage]
            ax.barh(y, width, left=left, color=colours[stage],
                    label=stage if y == 0 else None)
            left += width
        ax.text(left + 0.01, y, f"{run['target_tokens_per_s'] / 1000:.1f}k tokens/s",
                va="center", fontsize=8)
    ax.set_yticks(range(len(runs)), [run["label"] for run in runs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 2.1)
    ax.set_xlabel("seconds of the decoding thread (en-de test split, 2,000 lines)", fontsize=8)
    ax.set_title("rpt on an H200, float16, batch 32, beam 4: where the time goes", fontsize=9)
    ax.legend(fontsize=7, ncol=1, loc="center right")
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(args.out + ".png")
    for run in runs:
        print(run["label"], run["target_tokens_per_s"], run["seconds"])


if __name__ == "__main__":
    main()
