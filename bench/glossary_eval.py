#!/usr/bin/python3
"""Glossaries on a test split: do translations follow the glossary, what does it do to quality,
and what does it cost (docs/glossaries.md).

A bilingual word list is first drawn from the training split: for each source word (4+ letters,
no stop word, 5+ sentences) the target word that co-occurs with it most (Dice coefficient over
sentence pairs, >= 0.3). Then, on the test split, with rpt-translate:
  (a) real terms: entries (s, t) of that list that the references follow consistently (t in
      >= 80% of the 2+ references whose source holds s) and that the model misses at least
      once; the glossary of all such entries is applied to the whole split. BLEU and chrF
      (sacrebleu) on the sentences holding a term, with and without the glossary.
  (b) counterfactual terms: the split's most frequent list words, each given another associated
      target word of the same shape (a rendering the model would not choose; not always a valid
      translation, so a harder test than a valid one): the share of sentences with a term whose
      translation holds every target as often as the source holds the term, and the share where
      a target only comes after the translation's last sentence end (appended where the model
      stopped, not placed).
  (c) cost: rpt-translate's time on the sentences without a term and on those with one, with
      and without the glossary, runs alternating (--runs each), medians compared.
(a) and (b) run with each enforcement method (--methods). Writes a JSON summary and, with
--plot, a PNG from the JSON files given as inputs.

  bench/glossary_eval.py --model models/en-de --train ../shared/data/ui.en-de.train.tsv \\
      --tsv ../shared/data/ui.en-de.test.tsv --json docs/glossary_en-de.json
  bench/glossary_eval.py --plot docs/glossary.png docs/glossary_*.json
"""
import collections
import json
import os
import re
import statistics
import sys
import tempfile

from eval_common import corpus_scores, evaluate_or_plot, evaluation_arguments, run_lines

WORD = re.compile(r"\w+", re.UNICODE)
STOP = set("""about above after again against all also and another any are because been before
being below between both but by can cannot could did does doing down during each either else
every few for from further had has have having here how into its itself just like more most must
not now off once only other our out over own same shall should some such than that the their them
then there these they this those through too under until upon very was were what when where which
while who whom why will with within without would you your yours""".split())


def words(text):
    return WORD.findall(text)


def word_list(train_tsv, max_lines):
    """source word (lower case) -> target words (surface forms) by Dice, best first (up to 6;
    words in over 2% of the target sentences left out after the first: function words)."""
    src_df, tgt_df, pair = collections.Counter(), collections.Counter(), collections.Counter()
    surface = collections.defaultdict(collections.Counter)
    with open(train_tsv, encoding="utf-8") as f:
        n = 0
        for line in f:
            if n >= max_lines:
                break
            n += 1
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2:
                continue
            s = {w.lower() for w in words(cols[0]) if len(w) >= 4 and w.isalpha()} - STOP
            t = set()
            for w in words(cols[1]):
                if len(w) >= 4 and w.isalpha():
                    surface[w.lower()][w] += 1
                    t.add(w.lower())
            src_df.update(s)
            tgt_df.update(t)
            for a in s:
                for b in t:
                    pair[a, b] += 1
    lines = max(1, n)
    ranked = collections.defaultdict(list)
    for (a, b), c in pair.items():
        if src_df[a] >= 5 and c >= 3:
            ranked[a].append((2 * c / (src_df[a] + tgt_df[b]), b))
    out = {}
    for a, cands in ranked.items():
        cands.sort(reverse=True)
        if cands[0][0] >= 0.3:
            rest = [b for _, b in cands[1:] if tgt_df[b] < 0.02 * lines][:5]
            out[a] = [surface[b].most_common(1)[0][0] for b in [cands[0][1]] + rest]
    return out


def matches(text, term):
    return len(re.findall(r"(?<!\w)" + re.escape(term) + r"(?!\w)", text, re.IGNORECASE))


def write_tsv(path, entries):
    with open(path, "w", encoding="utf-8") as f:
        for s, t in sorted(entries.items()):
            f.write(f"{s}\t{t}\n")


def translate(args, lines, glossary=None, method="mask"):
    cmd = [args.rpt_translate, "--model", args.model, "--quiet", "--threads", str(args.threads)]
    if glossary:
        cmd += ["--glossary", glossary, "--glossary-method", method]
    hyp, _, seconds = run_lines(cmd, lines)
    assert len(hyp) == len(lines), (len(hyp), len(lines))
    return hyp, seconds


scores = corpus_scores


def kept(src, hyp, entries):
    """Per sentence holding a term: every target at least as often as its source matches, its
    capitalised form counted too where a source occurrence has a capital the entry lacks (the
    engine's rule: engine/glossary.h count_term)."""
    out = []
    for s, h in zip(src, hyp):
        ok, any_term = True, False
        for term, t in entries.items():
            found = re.findall(r"(?<!\w)" + re.escape(term) + r"(?!\w)", s, re.IGNORECASE)
            if not found:
                continue
            any_term = True
            have = h.count(t)
            capital = t[:1].upper() + t[1:]
            if capital != t and any(f[:1].isupper() and not term[:1].isupper() for f in found):
                have += h.count(capital)
            ok = ok and have >= len(found)
        if any_term:
            out.append(ok)
    return out


def appended(src, hyp, entries):
    """Per sentence holding a term: some target comes only after the translation's last sentence
    end (". Akte"): inserted where the model stopped rather than placed by it."""
    out = []
    for s, h in zip(src, hyp):
        targets = [t for term, t in entries.items() if matches(s, term)]
        if targets:
            out.append(any(re.search(r"[.!?:;]\s+" + re.escape(t) + r"\W*$", h, re.IGNORECASE)
                           for t in targets))
    return out


def evaluate(args):
    with open(args.tsv, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t")[:2] for line in f]
    src, ref = [r[0] for r in rows], [r[1] for r in rows]
    lexicon = word_list(args.train, args.train_lines)
    base, _ = translate(args, src)
    tmp = tempfile.mkdtemp(prefix="rpt-glossary-")
    result = {}
    if args.json and os.path.exists(args.json):  # one part at a time: keep the other's results
        with open(args.json, encoding="utf-8") as f:
            result = json.load(f)
    result.update({"model": args.model, "tsv": args.tsv, "sentences": len(src),
                   "lexicon_entries": len(lexicon), "threads": args.threads})

    # (a) real terms the model gets wrong (always: (c) times their glossary): terminology, i.e.
    # list entries whose target the references use consistently (in >= 80% of the 2+ test
    # sentences holding the source word) and that the model misses in at least one of them.
    real = {}
    holding = collections.defaultdict(list)
    for i, s in enumerate(src):
        for w in {w.lower() for w in words(s)}:
            if w in lexicon:
                holding[w].append(i)
    for w, rows in sorted(holding.items()):
        t = lexicon[w][0]
        with_t = [i for i in rows if matches(ref[i], t)]
        if len(rows) >= 2 and len(with_t) >= 0.8 * len(rows) and \
                any(not matches(base[i], t) for i in with_t):
            real[w] = t
    real_path = os.path.join(tmp, "real.tsv")
    write_tsv(real_path, real)
    with_real = [i for i, s in enumerate(src) if any(matches(s, w) for w in real)]
    if "quality" in args.parts:
        quality(args, src, ref, base, lexicon, real, real_path, with_real, result, tmp)
    if "cost" in args.parts:
        cost(args, src, real_path, with_real, result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, ensure_ascii=False)
            f.write("\n")


def quality(args, src, ref, base, lexicon, real, real_path, with_real, result, tmp):
    sub = lambda xs: [xs[i] for i in with_real]  # noqa: E731
    a = {"entries": len(real), "sentences": len(with_real),
         "examples": dict(list(sorted(real.items()))[:12]),
         "without": scores(sub(base), sub(ref))}
    for method in args.methods:
        hyp, _ = translate(args, src, real_path, method)
        a[method] = scores(sub(hyp), sub(ref))
        a[method]["kept"] = round(statistics.mean(kept(sub(src), sub(hyp), real)), 4)
        a[method]["appended"] = round(statistics.mean(appended(sub(src), sub(hyp), real)), 4)
        a[method]["all_bleu"] = scores(hyp, ref)["bleu"]
    a["all_bleu_without"] = scores(base, ref)["bleu"]
    a["kept_without"] = round(statistics.mean(kept(sub(src), sub(base), real)), 4)
    result["real_terms"] = a
    print("(a)", json.dumps(a, ensure_ascii=False))

    # (b) counterfactual renderings
    freq = collections.Counter(w.lower() for s in src for w in set(words(s)))
    counter = {}
    for w, _ in freq.most_common():
        if w not in lexicon or len(counter) >= args.counterfactual:
            continue
        first = lexicon[w][0]
        # Another associated word of the same shape (a German noun stays capitalised): a
        # rendering the model would not choose.
        other = [t for t in lexicon[w][1:] if t[0].isupper() == first[0].isupper()
                 and not t.lower().startswith(first.lower()[:4])]
        if other:
            counter[w] = other[0]
    counter_path = os.path.join(tmp, "counterfactual.tsv")
    write_tsv(counter_path, counter)
    with_counter = [i for i, s in enumerate(src) if any(matches(s, w) for w in counter)]
    b = {"entries": len(counter), "sentences": len(with_counter),
         "examples": dict(list(counter.items())[:12]),
         "kept_without": round(statistics.mean(kept([src[i] for i in with_counter],
                                                    [base[i] for i in with_counter], counter)), 4)}
    for method in args.methods:
        hyp, _ = translate(args, src, counter_path, method)
        flags = kept([src[i] for i in with_counter], [hyp[i] for i in with_counter], counter)
        b[method] = {"kept": round(statistics.mean(flags), 4),
                     "appended": round(statistics.mean(appended(
                         [src[i] for i in with_counter], [hyp[i] for i in with_counter],
                         counter)), 4),
                     "missed": [{"source": src[i], "translation": hyp[i]}
                                for i, ok in zip(with_counter, flags) if not ok][: args.show]}
    result["counterfactual_terms"] = b
    print("(b)", json.dumps({k: v for k, v in b.items() if k not in args.methods},
                            ensure_ascii=False), {m: b[m]["kept"] for m in args.methods})


def cost(args, src, real_path, with_real, result):
    """(c): alternating runs without and with the real-terms glossary (each method)."""
    holding = set(with_real)
    subsets = {"no_terms": [s for i, s in enumerate(src) if i not in holding],
               "terms": [src[i] for i in with_real]}
    times = collections.defaultdict(list)
    for _ in range(args.runs):
        for name, lines in subsets.items():
            times[name + "_off"].append(translate(args, lines)[1])
            for method in args.methods:
                times[f"{name}_{method}"].append(translate(args, lines, real_path, method)[1])
    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    result["cost"] = {"runs": args.runs, "threads": args.threads, "seconds": dict(times),
                      "median": med, "sentences_no_terms": len(subsets["no_terms"]),
                      "sentences_terms": len(subsets["terms"])}
    fastest = {k: min(v) for k, v in times.items()}  # the least disturbed run of each
    for method in args.methods:
        for name in subsets:
            result["cost"][f"ratio_{name}_{method}"] = round(
                med[f"{name}_{method}"] / med[name + "_off"], 3)
            result["cost"][f"ratio_fastest_{name}_{method}"] = round(
                fastest[f"{name}_{method}"] / fastest[name + "_off"], 3)
    print("(c)", json.dumps({k: v for k, v in result["cost"].items() if k != "seconds"}))


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = []
    for path in args.inputs:
        with open(path, encoding="utf-8") as f:
            results.append(json.load(f))
    methods = [m for m in ("mask", "phrase") if m in results[0]["real_terms"]]
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.3), dpi=100)
    names = [os.path.basename(r["model"]) for r in results]
    width = 0.8 / (len(methods) + 1)
    panels = [
        (lambda r, m: r["real_terms"][m]["bleu"], "(a) real terms: BLEU on their sentences"),
        (lambda r, m: 100 * (r["counterfactual_terms"]["kept_without"] if m == "without"
                             else r["counterfactual_terms"][m]["kept"]),
         "(b) counterfactual: % holding every term"),
        (lambda r, m: 100 * r["counterfactual_terms"][m]["appended"],
         "(b) counterfactual: % with a term appended"),
    ]
    for ax, (value, title) in zip(axes, panels):
        systems = ["without"] + methods if "appended" not in title else methods
        for k, system in enumerate(systems):
            xs = [i + (k - (len(systems) - 1) / 2) * width for i in range(len(results))]
            ys = [value(r, system) for r in results]
            colors = {"without": "C0", "mask": "C1", "phrase": "C2"}
            bars = ax.bar(xs, ys, width, color=colors[system],
                          label="no glossary" if system == "without" else system)
            ax.bar_label(bars, labels=[f"{y:.1f}" for y in ys], fontsize=7)
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(names)
        ax.set_title(title, fontsize=8)
    axes[1].set_ylim(0, 112)
    axes[0].legend(fontsize=7, loc="lower center", ncol=3)
    fig.suptitle("Glossaries on the test splits (bench/glossary_eval.py)", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.plot)
    print(f"wrote {args.plot}")


def main():
    ap = evaluation_arguments(__doc__, threads=1, show=10)
    ap.add_argument("--train")
    ap.add_argument("--train-lines", type=int, default=200000)
    ap.add_argument("--methods", nargs="+", default=["mask", "phrase"])
    ap.add_argument("--parts", nargs="+", default=["quality", "cost"],
                    help="quality: (a) and (b); cost: (c) (run it on an idle machine)")
    ap.add_argument("--counterfactual", type=int, default=40, help="counterfactual entries")
    ap.add_argument("--runs", type=int, default=3, help="alternating timing runs")
    evaluate_or_plot(ap, evaluate, plot, required=("model", "tsv", "train"))


if __name__ == "__main__":
    sys.exit(main())
