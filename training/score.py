#!/usr/bin/env python3
"""Score detokenized translations: sacrebleu BLEU and chrF against references, and the
placeholder pass-through rate (placeholders.py).

    score.py --src test.src --ref test.tgt --hyp hyp.txt [--json OUT] [--show 5]

Any system's output can be scored the same way (onmt_translate, rpt-translate, CTranslate2),
so the numbers are comparable. BLEU uses sacrebleu's defaults (13a tokenization, mixed case).
"""
import argparse
import json
import os
import sys

import sacrebleu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placeholders  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--hyp", required=True)
    ap.add_argument("--json", help="write the scores here too")
    ap.add_argument("--show", type=int, default=0, help="print N placeholder failures")
    args = ap.parse_args()
    src, ref, hyp = read(args.src), read(args.ref), read(args.hyp)
    if not (len(src) == len(ref) == len(hyp)):
        sys.exit(f"line counts differ: src {len(src)}, ref {len(ref)}, hyp {len(hyp)}")
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(hyp, [ref])
    c = chrf.corpus_score(hyp, [ref])
    with_ph = [i for i, s in enumerate(src) if placeholders.placeholders(s)]
    ok = [i for i in with_ph if placeholders.passes(src[i], hyp[i])]
    ref_ok = [i for i in with_ph if placeholders.passes(src[i], ref[i])]
    result = {
        "sentences": len(src),
        "bleu": round(b.score, 2),
        "chrf": round(c.score, 2),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "bleu_detail": str(b),
        "sentences_with_placeholders": len(with_ph),
        "placeholder_pass_rate": round(len(ok) / len(with_ph), 4) if with_ph else 1.0,
        "placeholder_pass_rate_all_sentences":
            round((len(src) - len(with_ph) + len(ok)) / len(src), 4) if src else 1.0,
        "reference_placeholder_pass_rate": round(len(ref_ok) / len(with_ph), 4) if with_ph else 1.0,
        "src": os.path.abspath(args.src), "ref": os.path.abspath(args.ref),
        "hyp": os.path.abspath(args.hyp),
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    shown = 0
    for i in with_ph:
        if i in ok or shown >= args.show:
            continue
        shown += 1
        missing = dict(placeholders.placeholders(src[i]) - placeholders.placeholders(hyp[i]))
        print(f"line {i + 1}: missing {missing}\n  src: {src[i]}\n  hyp: {hyp[i]}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
