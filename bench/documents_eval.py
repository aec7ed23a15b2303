#!/usr/bin/python3
"""Texts, not strings: what sentence splitting buys on paragraphs, whether layout survives, what a
long document costs, and whether real HTML pages keep their tree (docs/documents.md).

Runs the real rpt-server (JSON API, cache off) on a model and its test split:

  1. paragraphs: 2-8 test sentences (those ending in . ! ?) joined with real separators
     (space, two spaces, line break, blank line, CRLF, "- " list items), translated whole
     (split_sentences none) and split (auto), and each sentence alone. Per paragraph length:
     sentences kept (terminal marks in the output against the sentences sent, capped at 1),
     BLEU/chrF against the references joined the same way (sentence by sentence: each test
     string translated alone, joined), and whether the split output is the sentences' own
     (split) translations in the paragraph's layout, byte for byte;
  2. a ~20,000-word document (test sentences in paragraphs) in one call against the same
     sentences sent as separate texts: seconds each, and the ratio;
  3. real HTML pages (Debian's /usr/share/doc, --html PAGE...): translated with format html, the
     tree of elements and attributes (translatable attributes aside) compared with lxml.

  bench/documents_eval.py --server build/server/rpt-server --model models/en-de \\
      --tsv ../shared/data/ui.en-de.test.tsv --json docs/documents_en-de.json
  bench/documents_eval.py --plot docs/documents.png docs/documents_en-de.json docs/documents_en-fr.json
"""
import argparse
import json
import os
import platform
import random
import re
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "server"))
sys.path.insert(0, os.path.join(REPO, "bench"))
os.environ.setdefault("RPT_SERVER_BINARY", os.path.join(REPO, "build", "server", "rpt-server"))
from eval_common import corpus_scores  # noqa: E402
from rpt_server import ServerProcess  # noqa: E402

SEPARATORS = [" ", "  ", "\n", "\n\n", "\r\n", "\n- "]
TERMINAL = re.compile(r"[.!?](?=\s|$)")
TRANSLATABLE_ATTRIBUTES = {"title", "alt", "placeholder", "aria-label", "value"}
CALL_TEXTS = 64
# Real pages Debian ships (a quick start, a texinfo page, a DocBook section, a whole manual).
DEFAULT_PAGES = ["/usr/share/doc/valgrind/html/QuickStart.html",
                 "/usr/share/doc/libffi-dev/html/Multiple-ABIs.html",
                 "/usr/share/doc/shared-mime-info/shared-mime-info-spec.html/x497.html",
                 "/usr/share/doc/bzip2/manual.html"]


def read_sentences(tsv):
    pairs = []
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            source, _, target = line.rstrip("\n").partition("\t")
            if re.search(r"[.!?]$", source) and source[:1].isupper() and len(source) < 200:
                pairs.append((source, target))
    return pairs


def translate(server, texts, **options):
    """Translations of `texts` (best hypotheses), CALL_TEXTS a call, and the seconds taken."""
    out, started = [], time.perf_counter()
    for i in range(0, len(texts), CALL_TEXTS):
        status, _, body = server.translate(
            {"texts": texts[i:i + CALL_TEXTS], "options": dict(use_cache=False, **options)},
            timeout=600)
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {body}")
        out += [t["hypotheses"][0]["text"] for t in body["translations"]]
    return out, time.perf_counter() - started


def flat(text):
    return " ".join(text.split())


def paragraphs(server, pairs, per_length, seed):
    rng = random.Random(seed)
    rows = []
    for length in range(2, 9):
        for _ in range(per_length):
            chosen = rng.sample(pairs, length)
            separators = [rng.choice(SEPARATORS) for _ in range(length - 1)]
            rows.append((length, chosen, separators))

    def join(parts, separators):
        text = parts[0]
        for separator, part in zip(separators, parts[1:]):
            text += separator + part
        return text

    sources = [join([s for s, _ in chosen], seps) for _, chosen, seps in rows]
    references = [flat(join([t for _, t in chosen], seps)) for _, chosen, seps in rows]
    whole, whole_seconds = translate(server, sources, split_sentences="none")
    split, split_seconds = translate(server, sources, split_sentences="auto")
    # Each test string alone as it is (the sentence-by-sentence baseline), and split (what the
    # paragraph's segments must equal: some test strings hold two sentences).
    singles = sorted({s for _, chosen, _ in rows for s, _ in chosen})
    alone = dict(zip(singles, translate(server, singles, split_sentences="none")[0]))
    alone_split = dict(zip(singles, translate(server, singles, split_sentences="auto")[0]))
    by_length = {}
    for i, (length, chosen, seps) in enumerate(rows):
        entry = by_length.setdefault(length, {"whole": [], "split": [], "alone": [], "refs": [],
                                              "kept_whole": [], "kept_split": [], "layout": 0,
                                              "paragraphs": 0})
        sentence_by_sentence = join([alone[s] for s, _ in chosen], seps)
        entry["whole"].append(flat(whole[i]))
        entry["split"].append(flat(split[i]))
        entry["alone"].append(flat(sentence_by_sentence))
        entry["refs"].append(references[i])
        entry["kept_whole"].append(min(len(TERMINAL.findall(whole[i])), length) / length)
        entry["kept_split"].append(min(len(TERMINAL.findall(split[i])), length) / length)
        entry["layout"] += split[i] == join([alone_split[s] for s, _ in chosen], seps)
        entry["paragraphs"] += 1
    table = []
    for length, e in sorted(by_length.items()):
        table.append({
            "sentences": length, "paragraphs": e["paragraphs"],
            "kept_whole": round(sum(e["kept_whole"]) / len(e["kept_whole"]), 3),
            "kept_split": round(sum(e["kept_split"]) / len(e["kept_split"]), 3),
            "whole": corpus_scores(e["whole"], e["refs"]),
            "split": corpus_scores(e["split"], e["refs"]),
            "sentence_by_sentence": corpus_scores(e["alone"], e["refs"]),
            "split_equals_sentences_alone": e["layout"]})
    every = {k: [x for e in by_length.values() for x in e[k]]
             for k in ("whole", "split", "alone", "refs")}
    return {"by_length": table,
            "all": {"whole": corpus_scores(every["whole"], every["refs"]),
                    "split": corpus_scores(every["split"], every["refs"]),
                    "sentence_by_sentence": corpus_scores(every["alone"], every["refs"]),
                    "split_equals_sentences_alone": sum(e["layout"] for e in by_length.values()),
                    "paragraphs": len(rows)},
            "seconds": {"whole": round(whole_seconds, 2), "split": round(split_seconds, 2)}}


def long_document(server, pairs, words, seed):
    rng = random.Random(seed)
    sentences, count = [], 0
    while count < words:
        source = rng.choice(pairs)[0]
        sentences.append(source)
        count += len(source.split())
    text, paragraph = "", []
    for sentence in sentences:
        paragraph.append(sentence)
        if len(paragraph) == 5:
            text += " ".join(paragraph) + "\n\n"
            paragraph = []
    text += " ".join(paragraph)
    times = {"document": [], "separate": []}
    for _ in range(3):  # alternating, medians
        _, seconds = translate(server, [text], split_sentences="auto")
        times["document"].append(seconds)
        # The same segments (a test string may hold two sentences), 64 texts a call.
        _, seconds = translate(server, sentences, split_sentences="auto")
        times["separate"].append(seconds)
    document, separate = (sorted(times[k])[1] for k in ("document", "separate"))
    return {"words": count, "sentences": len(sentences), "bytes": len(text.encode()),
            "document_seconds": round(document, 2), "separate_seconds": round(separate, 2),
            "ratio": round(document / separate, 3)}


def tree(html):
    """Elements (tag, attributes but the translatable ones) in document order, with lxml."""
    import lxml.html
    root = lxml.html.document_fromstring(html)
    return [(e.tag, sorted((k, v) for k, v in e.attrib.items()
                           if k not in TRANSLATABLE_ATTRIBUTES))
            for e in root.iter() if isinstance(e.tag, str)]


def html_pages(server, pages):
    results = []
    for page in pages:
        with open(page, "rb") as f:
            source = f.read().decode("utf-8", errors="replace")
        started = time.perf_counter()
        status, _, body = server.translate(
            {"texts": [source], "options": {"format": "html", "use_cache": False}}, timeout=900)
        seconds = time.perf_counter() - started
        if status != 200:
            results.append({"page": page, "error": body})
            continue
        translation = body["translations"][0]
        output = translation["hypotheses"][0]["text"]
        results.append({"page": os.path.relpath(page, "/usr/share/doc"), "bytes": len(source),
                        "segments": translation["segments"], "seconds": round(seconds, 2),
                        "tree_identical": tree(source) == tree(output),
                        # a translation may reorder inline siblings (word order): the same
                        # elements and attributes, in another order
                        "same_elements": sorted(map(repr, tree(source))) ==
                                         sorted(map(repr, tree(output))),
                        "spans_kept": translation["hypotheses"][0]["spans_kept"]})
    return results


def hardware():
    model = ""
    try:
        model = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((line.split(":", 1)[1].strip() for line in model.splitlines()
                      if line.startswith("Model name")), "")
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "machine": platform.machine()}


def plot(output, inputs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (kept, chrf) = plt.subplots(1, 2, figsize=(9, 3.4))
    for path in inputs:
        with open(path) as f:
            data = json.load(f)
        name = data["model"]
        rows = data["paragraphs"]["by_length"]
        x = [r["sentences"] for r in rows]
        kept.plot(x, [r["kept_whole"] for r in rows], "o--", label=f"{name} whole")
        kept.plot(x, [r["kept_split"] for r in rows], "o-", label=f"{name} split")
        chrf.plot(x, [r["whole"]["chrf"] for r in rows], "o--", label=f"{name} whole")
        chrf.plot(x, [r["split"]["chrf"] for r in rows], "o-", label=f"{name} split")
    kept.set(xlabel="sentences in the paragraph", ylabel="sentences kept", ylim=(0, 1.05),
             title="Sentences kept")
    chrf.set(xlabel="sentences in the paragraph", ylabel="chrF", title="chrF vs joined references")
    for axis in (kept, chrf):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(output, dpi=80)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default=os.environ["RPT_SERVER_BINARY"])
    ap.add_argument("--model")
    ap.add_argument("--tsv")
    ap.add_argument("--per-length", type=int, default=30,
                    help="paragraphs per length (0: none)")
    ap.add_argument("--words", type=int, default=20000,
                    help="words of the long document (0: none)")
    ap.add_argument("--html", nargs="*", default=None,
                    help="HTML pages (default: a few of /usr/share/doc; none given: none)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--plot", help="write a PNG from the JSON files given as inputs")
    ap.add_argument("inputs", nargs="*")
    args = ap.parse_args()
    if args.plot:
        plot(args.plot, args.inputs)
        return 0
    if not args.tsv or not os.path.exists(args.tsv):
        print(f"documents_eval: no test split at {args.tsv}; skipped")
        return 77
    os.environ["RPT_SERVER_BINARY"] = args.server
    name = os.path.basename(os.path.normpath(args.model))
    server = ServerProcess(["--model", f"{name}={args.model}", "--threads", str(args.threads),
                            "--max-texts-per-request", "256", "--max-segments-per-request", "8192",
                            "--max-queued-sentences", "8192", "--max-queued-tokens", "1000000"])
    try:
        pairs = read_sentences(args.tsv)
        result = {"model": name, "hardware": hardware(), "sentences_available": len(pairs),
                  "settings": "CPU float32, beam 4, cache off, JSON API"}
        if args.per_length > 0:
            result["paragraphs"] = paragraphs(server, pairs, args.per_length, args.seed)
        if args.words > 0:
            result["long_document"] = long_document(server, pairs, args.words, args.seed)
        pages = args.html
        if pages is None:
            pages = [page for page in DEFAULT_PAGES if os.path.exists(page)]
        if pages:
            result["html"] = html_pages(server, pages)
    finally:
        server.close()
    if args.json and os.path.exists(args.json):  # a partial run updates what it measured
        with open(args.json) as f:
            result = {**json.load(f), **result}
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
