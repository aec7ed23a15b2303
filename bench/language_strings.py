#!/usr/bin/env python3
"""Short UI strings in more languages, for measuring language detection beyond the repository's
en/de/fr data: the translations (msgstr) of the gettext catalogues installed on this machine under
/usr/share/locale/CODE/LC_MESSAGES/*.mo (msgunfmt, from Debian's gettext), normalised as
../shared/data was (mnemonic markers removed, white space folded), untranslated ones dropped,
deduplicated, shuffled with a fixed seed, at most --count per language, one a line in DIR/CODE.txt.

    python3 bench/language_strings.py --out /tmp/langid es it nl pt ru pl sv
    RPT_LANGUAGE_STRINGS=/tmp/langid build/tests/server/scheduler_test \\
        --gtest_filter=LanguageDetectionTest.MoreLanguages

(en, de and fr come from ../shared/data's test split in the test itself.) Which catalogues a
machine has depends on its packages: the numbers are a sample, not a benchmark of record.
"""
import argparse
import ast
import glob
import os
import random
import re
import subprocess


def catalogue_pairs(po_text):
    """(msgid, msgstr) of msgunfmt's output; plural entries give their first form."""
    entries, entry, key = [], {}, None
    for line in po_text.splitlines():
        for prefix, name in (("msgid ", "msgid"), ("msgid_plural ", "plural"),
                             ("msgstr[0] ", "msgstr"), ("msgstr ", "msgstr")):
            if line.startswith(prefix):
                if name == "msgid" and entry:
                    entries.append(entry)
                    entry = {}
                key = name
                entry[name] = literal(line[len(prefix):])
                break
        else:
            if line.startswith("msgstr["):
                key = None
            elif line.startswith('"') and key:
                entry[key] += literal(line)
    if entry:
        entries.append(entry)
    return [(e.get("msgid", ""), e.get("msgstr", "")) for e in entries]


def literal(quoted):
    try:
        return ast.literal_eval(quoted)
    except (SyntaxError, ValueError):
        return ""


def normalise(text):
    text = re.sub(r"[_&~](?=\w)", "", text)
    return " ".join(text.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="+", help="locale codes: es it nl ...")
    parser.add_argument("--out", required=True, help="folder for CODE.txt")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for language in args.languages:
        strings = set()
        for mo in sorted(glob.glob(f"/usr/share/locale/{language}/LC_MESSAGES/*.mo")):
            run = subprocess.run(["msgunfmt", mo], capture_output=True)
            try:
                text = run.stdout.decode("utf-8")
            except UnicodeDecodeError:
                continue  # not a UTF-8 catalogue
            for msgid, msgstr in catalogue_pairs(text):
                if msgid and msgstr and msgid != msgstr and "\x04" not in msgid:
                    if normalise(msgstr):
                        strings.add(normalise(msgstr))
        chosen = sorted(strings)
        random.Random(args.seed).shuffle(chosen)
        with open(os.path.join(args.out, f"{language}.txt"), "w", encoding="utf-8") as f:
            for text in chosen[:args.count]:
                f.write(text + "\n")
        print(f"{language}: {min(len(chosen), args.count)} of {len(strings)} strings")


if __name__ == "__main__":
    main()
