#!/usr/bin/env python3
"""Protected spans on a test split: how often translations keep their source's spans, and BLEU.

Translates the source column of a TSV split with rpt-translate twice, with span protection (the
default) and without (--no-protect-spans), and counts spans with rpt-spans, the engine's own
recognizer (docs/protected-spans.md). For each system:
  kept      sentences with spans whose translation holds every span of the source exactly as
            often (accelerator markers included);
  exact     all sentences whose translation's spans are exactly the source's: nothing lost,
            nothing invented (markers compared where the source has one, as the engine does);
  BLEU      sacrebleu (13a) on all sentences and on the sentences with spans.
The references' rates are the human ceiling. Writes a JSON summary and, with --plot, a PNG
(matplotlib: Debian python3-matplotlib).

  bench/protected_spans_eval.py --model models/en-fr --tsv ../shared/data/ui.en-fr.test.tsv \\
      --json docs/protected_spans_en-fr.json
  bench/protected_spans_eval.py --plot docs/protected_spans.png docs/protected_spans_*.json
"""
import collections
import json
import os
import time

from eval_common import corpus_scores, evaluate_or_plot, evaluation_arguments, run_lines


def span_multisets(rpt_spans, lines):
    """Per line, the multiset of span texts (an accelerator marker counted as "accelerator")."""
    out, _, _ = run_lines([rpt_spans], lines)
    assert len(out) == len(lines), (len(out), len(lines))
    return [collections.Counter("accelerator" if s["kind"] == "accelerator" else s["text"]
                                for s in json.loads(l)["spans"]) for l in out]


def comparable(hyp, src):
    """A translation's spans as the engine compares them: markers only where the source has one
    (an identifier such as target_name carried over can read as a marker)."""
    if "accelerator" in src:
        return hyp
    return collections.Counter({t: n for t, n in hyp.items() if t != "accelerator"})


def bleu(hyp, ref):
    return corpus_scores(hyp, ref)["bleu"]


def evaluate(args):
    with open(args.tsv, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t")[:2] for line in f]
    if args.limit:
        rows = rows[: args.limit]
    src = [r[0] for r in rows]
    ref = [r[1] for r in rows]
    src_spans = span_multisets(args.rpt_spans, src)
    with_spans = [i for i, s in enumerate(src_spans) if s]
    base = [args.rpt_translate, "--model", args.model, "--quiet", "--threads", str(args.threads)]
    systems = {"reference": ref}
    seconds = {}
    for name, extra in (("protected", []), ("unprotected", ["--no-protect-spans"])):
        start = time.perf_counter()
        systems[name], _, _ = run_lines(base + extra, src)
        seconds[name] = round(time.perf_counter() - start, 2)
    result = {
        "model": args.model, "tsv": args.tsv, "sentences": len(src),
        "sentences_with_spans": len(with_spans), "spans": sum(sum(s.values()) for s in src_spans),
        "seconds": seconds, "systems": {},
    }
    for name, hyp in systems.items():
        hyp_spans = [comparable(h, s) for h, s in zip(span_multisets(args.rpt_spans, hyp), src_spans)]
        kept = [i for i in with_spans if all(hyp_spans[i][t] == n for t, n in src_spans[i].items())]
        exact = [i for i in range(len(src)) if hyp_spans[i] == src_spans[i]]
        entry = {
            "kept": round(len(kept) / max(1, len(with_spans)), 4),
            "exact_all": round(len(exact) / len(src), 4),
            "bleu_all": bleu(hyp, ref) if name != "reference" else None,
            "bleu_with_spans": (bleu([hyp[i] for i in with_spans], [ref[i] for i in with_spans])
                                if name != "reference" else None),
            "failures": [{"line": i + 1, "source": src[i], "translation": hyp[i],
                          "lost": dict(src_spans[i] - hyp_spans[i]),
                          "invented": dict(hyp_spans[i] - src_spans[i])}
                         for i in range(len(src)) if hyp_spans[i] != src_spans[i]][: args.show],
        }
        result["systems"][name] = entry
        print(f"{name:12s} kept {entry['kept']:.2%} of {len(with_spans)}  exact {entry['exact_all']:.2%}"
              f" of {len(src)}  BLEU all {entry['bleu_all']}  with spans {entry['bleu_with_spans']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, ensure_ascii=False)
            f.write("\n")


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = []
    for path in args.inputs:
        with open(path, encoding="utf-8") as f:
            results.append(json.load(f))
    names = ["unprotected", "protected", "reference"]
    fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=100)
    width = 0.27
    for k, name in enumerate(names):
        xs = [i + (k - 1) * width for i in range(len(results))]
        ys = [100 * r["systems"][name]["kept"] for r in results]
        bars = ax.bar(xs, ys, width, label=name)
        ax.bar_label(bars, labels=[f"{y:.1f}" for y in ys], fontsize=8)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"{os.path.basename(r['model'])} ({r['sentences_with_spans']} sentences "
                        "with spans)" for r in results])
    ax.set_ylabel("% keeping every span")
    ax.set_ylim(0, 108)
    ax.legend(loc="lower center", fontsize=8, ncol=3)
    ax.set_title("Protected spans kept, test splits (bench/protected_spans_eval.py)", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.plot)
    print(f"wrote {args.plot}")


def main():
    ap = evaluation_arguments(__doc__, threads=2, show=20)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--rpt-spans", default="build/cli/rpt-spans")
    evaluate_or_plot(ap, evaluate, plot)


if __name__ == "__main__":
    main()
