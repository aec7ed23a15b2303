#!/usr/bin/env python3
"""Placeholders in localisation strings, and how often a translation keeps them.

A placeholder is anything a program substitutes or renders: printf conversions (%s, %d, %qs,
%1$s, %.2f, %%), Qt/KDE positional arguments (%1, %2), make/shell/Python variables ($(ARG1),
${name}, $OMP_NUM_THREADS), format fields ({0}, {}, {name}) and markup tags (<b>, </b>, <br/>,
<span foreground="red">). A translation "passes" a source sentence when every placeholder of the
source occurs in it at least as often as in the source (order is free: languages reorder).

Usage:
  placeholders.py rate --src test.en --hyp hyp.de [--ref test.de] [--show 10] [--json OUT]
  placeholders.py symbols           # the SentencePiece user_defined_symbols used by prepare.py
"""
import argparse
import collections
import json
import re
import sys

# Markup tags that renderers interpret (HTML, Pango, Qt rich text, DocBook, KDE, Wesnoth). Angle
# brackets around other words are usually metavariables that translators translate
# (<number> -> <Zahl>), so they are not placeholders.
MARKUP_TAGS = sorted(
    "a b i u s p br hr tt big small span font sub sup strong em code pre kbd center div qt nl "
    "ul ol li table tr td th h1 h2 h3 h4 h5 h6 html body head img para filename application "
    "emphasis command literal guilabel guimenu guimenuitem link ulink italic bold".split(),
    key=len, reverse=True)

# Order matters: longer forms first so that %1$s is not read as %1 followed by "$s".
PLACEHOLDER_RE = re.compile(
    r"""
      %(?:\d+\$)?[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t|q[+#]*)?[diouxXeEfFgGaAcspnqDTKV]
                                       # printf / GCC diagnostics: %s %5.2f %1$s %lu %qs %q+D
    | %%                               # literal percent (must survive too)
    | %\d+                             # Qt / KDE: %1 %2
    | \$\([A-Za-z0-9_.-]+\)            # $(ARG1)
    | \$\{[A-Za-z0-9_.-]+\}            # ${name}
    | \$[A-Z][A-Z0-9_]+                # $OMP_NUM_THREADS
    | \{\d*\}                          # {0} {}
    | \{[A-Za-z_][A-Za-z0-9_]*\}       # {name}
    | </?(?:TAGS)\b(?:\s[^<>]*)?/?>  # markup: <b> </b> <br/> <span foo="x">
    """.replace("TAGS", "|".join(MARKUP_TAGS)),
    re.VERBOSE,
)


def placeholders(text):
    """Multiset of placeholders in text."""
    return collections.Counter(PLACEHOLDER_RE.findall(text))


def passes(src, hyp):
    need = placeholders(src)
    have = placeholders(hyp)
    return all(have[p] >= n for p, n in need.items())


# SentencePiece user_defined_symbols: frequent placeholders of the en-de/en-fr training data
# (count >= ~40 there, metavariables such as <number> excluded) plus their obvious siblings. They are always kept as one piece, so the
# model copies one token instead of spelling "%" "s". Rare forms still survive: they are
# segmented normally (byte_fallback covers any character).
USER_SYMBOLS = (
    "%s %d %i %u %c %p %f %g %e %x %X %o %E %qs %qE %qD %qT %qd %lu %ld %li %lld %llu %zu %zd "
    "%ju %jd %lf %.1f %.2f %.250s %.255s %% "
    "%1$s %2$s %3$s %4$s %1$d %2$d %3$d %1$u %2$u "
    "%1 %2 %3 %4 %5 %6 %7 %8 %9 "
    "$(ARG1) $(ARG2) $(ARG3) "
    "{0} {1} {2} {3} {} "
    "<b> </b> <i> </i> <u> </u> <p> </p> <br> <br/> <tt> </tt> <big> </big> "
    "<small> </small> </span> <a> </a> <qt> </qt> <nl/> <para> </para> <filename> </filename> "
    "<strong> </strong> <em> </em> <code> </code> <italic> </italic> <application> </application>"
).split()


def cmd_rate(args):
    with open(args.src, encoding="utf-8") as f:
        src = [l.rstrip("\n") for l in f]
    with open(args.hyp, encoding="utf-8") as f:
        hyp = [l.rstrip("\n") for l in f]
    ref = None
    if args.ref:
        with open(args.ref, encoding="utf-8") as f:
            ref = [l.rstrip("\n") for l in f]
    if len(src) != len(hyp):
        sys.exit(f"error: {args.src} has {len(src)} lines, {args.hyp} has {len(hyp)}")
    total = len(src)
    ok = 0
    with_ph = 0
    ok_with_ph = 0
    ref_ok_with_ph = 0
    failures = []
    for i, (s, h) in enumerate(zip(src, hyp)):
        p = passes(s, h)
        ok += p
        if placeholders(s):
            with_ph += 1
            ok_with_ph += p
            if ref is not None:
                ref_ok_with_ph += passes(s, ref[i])
            if not p:
                failures.append((i + 1, s, h))
    result = {
        "sentences": total,
        "pass_rate_all": ok / total if total else 1.0,
        "sentences_with_placeholders": with_ph,
        "pass_rate_with_placeholders": ok_with_ph / with_ph if with_ph else 1.0,
    }
    if ref is not None:
        result["reference_pass_rate_with_placeholders"] = (
            ref_ok_with_ph / with_ph if with_ph else 1.0)
    print(json.dumps(result, indent=2))
    for line, s, h in failures[: args.show]:
        print(f"  line {line}: missing {dict(placeholders(s) - placeholders(h))}\n"
              f"    src: {s}\n    hyp: {h}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rate", help="placeholder pass-through rate of a translation")
    r.add_argument("--src", required=True, help="source sentences, one a line (detokenized)")
    r.add_argument("--hyp", required=True, help="translations, one a line (detokenized)")
    r.add_argument("--ref", help="references: also report how often they keep placeholders")
    r.add_argument("--show", type=int, default=0, help="print N failures to stderr")
    r.add_argument("--json", help="also write the result here")
    sub.add_parser("symbols", help="print the user_defined_symbols, one a line")
    args = ap.parse_args()
    if args.cmd == "rate":
        cmd_rate(args)
    else:
        print("\n".join(USER_SYMBOLS))


if __name__ == "__main__":
    main()
