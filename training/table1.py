"""Markdown table of training/table1.sh: per variant, validation figures at STEP (from
train.log), test scores of the step-STEP checkpoint (evaluate.sh's scores.json) and the
training speed (onmt_train's target tokens/s, averaged over the logged steps up to STEP)."""
import argparse
import json
import re
from pathlib import Path

STEP_LINE = re.compile(r"Step (\d+)/\s*\d+;.*?([\d.]+)/([\d.]+) tok/s")
VALID_PPL = re.compile(r"Validation perplexity: ([\d.]+)")
VALID_ACC = re.compile(r"Validation accuracy: ([\d.]+)")
POSITIONS = {"relative": "relative (Shaw, k = 16)", "sinusoidal": "absolute (sinusoidal)",
             "k0": "none (k = 0)"}


def training_figures(log: Path, step: int):
    """(validation ppl, validation accuracy, mean target tok/s) at `step`, from train.log."""
    last_step, ppl, acc, speeds = 0, None, None, []
    for line in log.read_text(errors="replace").splitlines():
        if m := STEP_LINE.search(line):
            last_step = int(m.group(1))
            if last_step <= step:
                speeds.append(float(m.group(3)))
        elif (m := VALID_PPL.search(line)) and last_step == step:
            ppl = float(m.group(1))
        elif (m := VALID_ACC.search(line)) and last_step == step:
            acc = float(m.group(1))
    return ppl, acc, sum(speeds) / len(speeds) if speeds else None


def cell(value, fmt):
    return "n/a" if value is None else format(value, fmt)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", required=True)
    parser.add_argument("--pair", required=True)
    parser.add_argument("--step", type=int, required=True)
    parser.add_argument("variants", nargs="+")
    args = parser.parse_args()
    print(f"{args.pair}, step {args.step}, test split, beam 4 (onmt_translate)\n")
    print("| positions | valid ppl | valid acc | test BLEU | test chrF | placeholders kept "
          "| train tok/s |")
    print("|---|---|---|---|---|---|---|")
    for variant in args.variants:
        run = Path(args.runs) / f"{args.pair}-{variant}"
        ppl, acc, speed = training_figures(run / "train.log", args.step)
        scores = json.loads(
            (run / "eval" / f"model_step_{args.step}-test" / "scores.json").read_text())
        print(f"| {POSITIONS.get(variant, variant)} | {cell(ppl, '.1f')} | {cell(acc, '.1f')} "
              f"| {scores['bleu']:.2f} | {scores['chrf']:.2f} "
              f"| {scores['placeholder_pass_rate']:.1%} | {cell(speed, '.0f')} |")


if __name__ == "__main__":
    main()
