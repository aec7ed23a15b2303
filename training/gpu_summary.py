#!/usr/bin/env python3
"""Summarise training runs: steps, speed, last training/validation figures, evaluation scores.

    gpu_summary.py RUNS_DIR RUN [RUN ...] [--json OUT.json]

RUN is PAIR-VARIANT (en-de-relative ...). Reads RUNS_DIR/RUN/train.log (onmt_train output,
appended by each train.sh start, whose header lines begin with '#'), RUNS_DIR/RUN/picked.txt
(gpu_session.sh finish) and RUNS_DIR/RUN/eval/*/scores.json (evaluate.sh). Prints one block per
run; --json writes the same as JSON. Used by training/gpu_session.sh; works on CPU runs too.
"""
import argparse
import glob
import json
import os
import re

STEP = re.compile(r"Step (\d+)/\s*(\d+); acc:\s*([\d.]+); ppl:\s*([\d.]+);.*?lr: ([\d.e-]+);"
                  r".*?(\d+)/(\d+) tok/s;\s*(\d+) sec")
VALID_PPL = re.compile(r"Validation perplexity: ([\d.]+)")
VALID_ACC = re.compile(r"Validation accuracy: ([\d.]+)")


def parse_log(path):
    segments, cur = [], None
    valid = []
    if not os.path.exists(path):
        return {"log": "missing"}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("# ") and "train.sh" in line:
                cur = {"start": line[2:].split()[0], "steps": []}
                segments.append(cur)
                continue
            m = STEP.search(line)
            if m and cur is not None:
                cur["steps"].append({"step": int(m[1]), "of": int(m[2]), "acc": float(m[3]),
                                     "ppl": float(m[4]), "lr": float(m[5]),
                                     "src_tok_s": int(m[6]), "tgt_tok_s": int(m[7]),
                                     "sec": int(m[8])})
            m = VALID_PPL.search(line)
            if m:
                valid.append({"ppl": float(m[1])})
            m = VALID_ACC.search(line)
            if m and valid:
                valid[-1]["acc"] = float(m[1])
    out = {"starts": len(segments)}
    with_steps = [s for s in segments if s["steps"]]
    if with_steps:
        last_seg = with_steps[-1]["steps"]
        last = last_seg[-1]
        out.update({"step": last["step"], "train_acc": last["acc"], "train_ppl": last["ppl"],
                    "lr": last["lr"], "tgt_tok_s": last["tgt_tok_s"]})
        if len(last_seg) >= 2 and last_seg[-1]["sec"] > last_seg[0]["sec"]:
            out["steps_per_s"] = round((last_seg[-1]["step"] - last_seg[0]["step"])
                                       / (last_seg[-1]["sec"] - last_seg[0]["sec"]), 2)
        out["train_seconds"] = sum(s["steps"][-1]["sec"] for s in with_steps)
    if valid:
        out["valid_ppl"] = valid[-1].get("ppl")
        out["valid_acc"] = valid[-1].get("acc")
    return out


def summarise(runs_dir, run):
    d = os.path.join(runs_dir, run)
    info = {"run": run}
    info.update(parse_log(os.path.join(d, "train.log")))
    ckpts = sorted(glob.glob(os.path.join(d, "ckpt", "model_step_*.pt")),
                   key=lambda p: int(re.search(r"_(\d+)\.pt$", p)[1]))
    info["checkpoints"] = [os.path.basename(p) for p in ckpts]
    picked = os.path.join(d, "picked.txt")
    if os.path.exists(picked):
        info["picked"] = open(picked, encoding="utf-8").read().strip()
    evals = {}
    for path in sorted(glob.glob(os.path.join(d, "eval", "*", "scores.json"))):
        r = json.load(open(path, encoding="utf-8"))
        evals[os.path.basename(os.path.dirname(path))] = {
            k: r.get(k) for k in ("bleu", "chrf", "placeholder_pass_rate",
                                  "sentences", "translate_seconds", "gpu")}
    info["eval"] = evals
    return info


def fmt(info):
    lines = [f"== {info['run']}"]
    if "step" in info:
        lines.append(
            f"   step {info['step']}  ({info.get('steps_per_s', '?')} steps/s, "
            f"{info.get('tgt_tok_s', '?')} tgt tok/s, {info.get('train_seconds', '?')} s "
            f"in {info['starts']} start(s))  train acc {info['train_acc']} ppl {info['train_ppl']}"
            f"  lr {info['lr']}")
    else:
        lines.append(f"   no training steps logged ({info.get('log', 'no Step lines')})")
    if info.get("valid_ppl") is not None:
        lines.append(f"   last validation: ppl {info['valid_ppl']} acc {info.get('valid_acc')}")
    if info.get("checkpoints"):
        lines.append(f"   checkpoints: {' '.join(info['checkpoints'][-5:])}")
    if info.get("picked"):
        lines.append(f"   picked: {info['picked']}")
    for name, r in info.get("eval", {}).items():
        ph = r.get("placeholder_pass_rate")
        lines.append(f"   {name}: BLEU {r['bleu']} chrF {r['chrf']} placeholders "
                     f"{ph:.1%} ({r.get('sentences')} sentences, {r.get('translate_seconds')} s"
                     f"{', gpu' if r.get('gpu') else ''})" if ph is not None else
                     f"   {name}: {r}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs_dir")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    infos = [summarise(args.runs_dir, r) for r in args.runs]
    print("\n".join(fmt(i) for i in infos))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(infos, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
