#!/usr/bin/env python3
"""A sentence's translation must not depend on its batch: rpt-translate on the first N sentences
of a test split, one at a time and in batches (and at several thread counts), in each compute
type; counts the sentences whose translation, and whose score, differs from the first run's.

    python3 bench/batch_invariance.py --model models/en-fr \
        --tsv ../shared/data/ui.en-fr.test.tsv --limit 300

Exit status 1 when any output differs (tests/CMakeLists.txt runs it on fewer sentences), 77 when
the split is absent. Protected spans stay on (rpt-translate's default), as users run it.
"""

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def translate(args, sources, compute_type, batch_size, threads):
    command = [args.rpt_translate, "--model", args.model, "--compute-type", compute_type,
               "--beam-size", str(args.beam_size), "--batch-size", str(batch_size),
               "--threads", str(threads), "--with-scores", "--quiet"]
    done = subprocess.run(command, input="\n".join(sources) + "\n", capture_output=True,
                          text=True, check=True)
    return [line.split("\t", 1) for line in done.stdout.splitlines()]  # [score, translation]


def int_list(text):
    return [int(x) for x in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tsv", required=True, help="source<TAB>reference per line")
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--limit", type=int, default=300, help="first N sentences")
    parser.add_argument("--compute-types", default="float32,int8")
    parser.add_argument("--batch-sizes", type=int_list, default=[1, 32],
                        help="the first is the reference run")
    parser.add_argument("--threads", type=int_list, default=[2],
                        help="each batch size runs at each thread count")
    parser.add_argument("--beam-size", type=int, default=4)
    args = parser.parse_args()

    if not Path(args.tsv).is_file():
        print(f"skipped: {args.tsv} is absent")
        return 77
    lines = Path(args.tsv).read_text(encoding="utf-8").splitlines()[:args.limit]
    sources = [line.split("\t")[0] for line in lines]
    runs = [(batch, threads) for batch in args.batch_sizes for threads in args.threads]
    differing = 0
    for compute_type in args.compute_types.split(","):
        reference = None
        for batch, threads in runs:
            outputs = translate(args, sources, compute_type, batch, threads)
            if reference is None:
                reference, reference_run = outputs, (batch, threads)
                continue
            if len(outputs) != len(reference):
                sys.exit(f"{len(outputs)} lines out of {len(sources)} at batch {batch}")
            texts = [i for i, (a, b) in enumerate(zip(reference, outputs)) if a[1:] != b[1:]]
            scores = sum(a[0] != b[0] for a, b in zip(reference, outputs))
            differing += len(texts) + scores
            where = f" (translations differ: lines {[i + 1 for i in texts[:10]]})" if texts else ""
            print(f"{args.model} {compute_type}: batch {batch} x {threads} threads = batch "
                  f"{reference_run[0]} x {reference_run[1]} threads on "
                  f"{len(sources) - len(texts)}/{len(sources)} translations, "
                  f"{len(sources) - scores}/{len(sources)} scores{where}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
