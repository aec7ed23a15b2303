#!/usr/bin/env python3
"""What int8 costs in translation quality: rpt-translate in float32 and in int8 on the same test
split, BLEU and chrF of each (sacrebleu), the share of token-identical outputs, and time.

    python3 bench/int8_quality.py --model models/en-fr --tsv ../shared/data/ui.en-fr.test.tsv

The split is tab-separated source and reference. Needs sacrebleu (PyPI).
"""

import argparse
import re
import subprocess
from pathlib import Path

import sacrebleu

REPO = Path(__file__).resolve().parent.parent


def translate(args, compute_type, sources):
    command = [args.rpt_translate, "--model", args.model, "--compute-type", compute_type,
               "--beam-size", str(args.beam_size), "--batch-size", str(args.batch_size),
               "--threads", str(args.threads), "--verbose"]
    done = subprocess.run(command, input="\n".join(sources) + "\n", capture_output=True,
                          text=True, check=True)
    seconds = float(re.search(r"tokens in ([0-9.]+) s", done.stderr).group(1))
    return done.stdout.splitlines(), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tsv", required=True, help="source<TAB>reference per line")
    parser.add_argument("--rpt-translate", default=str(REPO / "build" / "cli" / "rpt-translate"))
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="first N sentences only")
    args = parser.parse_args()

    pairs = [line.split("\t")[:2] for line in Path(args.tsv).read_text(encoding="utf-8").splitlines()]
    if args.limit:
        pairs = pairs[:args.limit]
    sources, references = [p[0] for p in pairs], [p[1] for p in pairs]
    outputs = {}
    print(f"{args.model}: {len(sources)} sentences, beam {args.beam_size}, batch "
          f"{args.batch_size}, {args.threads} threads")
    print("| compute type | BLEU | chrF | seconds |")
    print("|---|---|---|---|")
    for compute_type in ("float32", "int8"):
        text, seconds = translate(args, compute_type, sources)
        outputs[compute_type] = text
        bleu = sacrebleu.corpus_bleu(text, [references]).score
        chrf = sacrebleu.corpus_chrf(text, [references]).score
        print(f"| {compute_type} | {bleu:.2f} | {chrf:.2f} | {seconds:.2f} |")
    same = sum(a == b for a, b in zip(outputs["float32"], outputs["int8"]))
    print(f"int8 = float32 on {same}/{len(sources)} ({100.0 * same / len(sources):.1f}%)")


if __name__ == "__main__":
    main()
