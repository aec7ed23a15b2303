#!/usr/bin/env python3
"""Protected spans of the engine (rpt-spans) against training/placeholders.py on data splits.

For the source column of each TSV (source<TAB>target) it counts the engine's spans per family and
checks that every placeholder PLACEHOLDER_RE finds is one of the engine's spans or lies inside
one (the %s of <a href="%s">, an ICU message's inner {0}). The few readings where the engine
deliberately differs are named in EXPECTED_DIFFERENCES (docs/protected-spans.md says why); any
other difference is printed and makes the exit status 1. Exit status 77 when a file is missing.

Usage:
  span_coverage.py --rpt-spans build/cli/rpt-spans FILE.tsv... [--show 20] [--markdown]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placeholders  # noqa: E402

# Python placeholders the engine reads otherwise, on purpose. Each maps a name to a test on
# (python match text, source line, engine span text covering the match start or None).
EXPECTED_DIFFERENCES = {
    # Qt/KDE strings: %1x%2 is %1, "x", %2 (the engine reports %1), and a width of 1 is
    # pointless in printf, so "%1s" is %1 followed by "s" (seconds).
    "qt_positional_then_letter": lambda ph, line, eng: (
        re.fullmatch(r"%[1-9]\d?[A-Za-z]", ph) is not None and eng == ph[:-1]),
}


def engine_spans(rpt_spans, lines, accelerators=True):
    args = [rpt_spans] + ([] if accelerators else ["--no-accelerators"])
    out = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert len(out) == len(lines), (len(out), len(lines))
    return [json.loads(o)["spans"] for o in out]


def char_offsets(line, spans):
    """The engine's byte offsets as character offsets of the Python string."""
    data = line.encode("utf-8")
    return [(len(data[:s["begin"]].decode("utf-8", "replace")),
             len(data[:s["end"]].decode("utf-8", "replace")), s) for s in spans]


def compare(line, spans):
    """Python placeholders the engine does not have: [(text, reason or None, engine span)]."""
    ranges = char_offsets(line, spans)
    missing = []
    for m in placeholders.PLACEHOLDER_RE.finditer(line):
        b, e = m.span()
        if any(sb <= b and e <= se for sb, se, _ in ranges):
            continue
        at = next((s["text"] for sb, se, s in ranges if sb <= b < se), None)
        reason = next((name for name, test in EXPECTED_DIFFERENCES.items()
                       if test(m.group(), line, at)), None)
        missing.append((m.group(), reason, at))
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rpt-spans", required=True)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--show", type=int, default=20, help="print up to N unexpected differences")
    ap.add_argument("--markdown", action="store_true", help="print the counts as a table")
    args = ap.parse_args()

    kinds = ["printf", "percent", "positional", "brace", "icu_message", "variable", "tag",
             "entity", "escape", "accelerator"]
    missing = [f for f in args.files if not os.path.exists(f)]
    if missing:
        print(f"skipped: no {', '.join(missing)}")
        return 77  # ctest's SKIP_RETURN_CODE
    unexpected = 0
    rows = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            lines = [l.rstrip("\n").split("\t")[0] for l in f]
        counts = collections.Counter()
        reasons = collections.Counter()
        python_total = 0
        for line, spans in zip(lines, engine_spans(args.rpt_spans, lines)):
            counts.update(s["kind"] for s in spans)
            python_total += len(placeholders.PLACEHOLDER_RE.findall(line))
            for ph, reason, at in compare(line, spans):
                reasons[reason or "unexpected"] += 1
                if reason is None:
                    unexpected += 1
                    if unexpected <= args.show:
                        print(f"{path}: python {ph!r}, engine {at!r}: {line}", file=sys.stderr)
        rows.append((os.path.basename(path), len(lines), counts, python_total, reasons))

    if args.markdown:
        print("| split | lines | " + " | ".join(kinds) + " | all | placeholders.py |")
        print("|---" * (len(kinds) + 4) + "|")
        for name, n, counts, python_total, _ in rows:
            print(f"| {name} | {n} | " + " | ".join(str(counts[k]) for k in kinds)
                  + f" | {sum(counts.values())} | {python_total} |")
    else:
        for name, n, counts, python_total, reasons in rows:
            print(json.dumps({"file": name, "lines": n, "engine": dict(counts),
                              "placeholders_py": python_total, "differences": dict(reasons)}))
    if unexpected:
        print(f"{unexpected} placeholder(s) of placeholders.py the engine does not find",
              file=sys.stderr)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
