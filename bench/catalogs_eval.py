#!/usr/bin/python3
"""Real gettext catalogues translated whole: does what rpt writes pass gettext's own checks, are
the placeholders kept, how close is it to the human translation, and what does a catalogue cost
(docs/localization.md).

The catalogues are those installed on this machine (/usr/share/locale/LANG/LC_MESSAGES/*.mo) of
Debian packages that are not training data: a catalogue whose binary package (`dpkg -S`) or
source package (`dpkg-query -W -f='${source:Package}'`) is in the corpus' packages.txt, or
whose source package is that of a package listed there (`apt-cache show`), is refused. Per
catalogue, with gettext's tools:

  1. `msgunfmt X.mo | msgconv -t UTF-8` is the human translation (the reference);
     `msgfilter --keep-header sed -e d` empties every msgstr and msgstr[n] of it, the header
     kept: the template (checked: msgfmt --statistics counts 0 translated), flagged
     `#, c-format` where its msgid holds a C directive, as xgettext flags a C program's
     strings (a .mo keeps no flags);
  2. `rpt-translate --format po --no-fuzzy` fills the template, --runs times (medians of the
     wall time of the process, model load included, and of --verbose's translate time; the
     outputs compared byte for byte);
  3. checks on the output: `msgfmt --check` (exit status, errors), `msgcat` reads it (exit 0)
     and whether it writes it back byte for byte; entries translated (every form) of all;
     directives kept: per entry with printf/Python/brace directives in its msgid (or
     msgid_plural), the multiset of directives of each msgstr form equals the msgid's, and
     the C directives without a position (%n$) come in the msgid's order; a
     .mo keeps no flags, so `msgfmt --check` alone checks no format string: it is rerun with
     `#, c-format` added to every entry whose msgid holds a C directive, on rpt's output and on
     the reference (an entry that fails in the reference too is not counted against rpt);
     BLEU and chrF (sacrebleu, corpus) of rpt's msgstr against the human's over the entries
     both have (msgstr, or msgstr[0] and msgstr[1] of plural entries; white space folded),
     also over the entries whose msgid (mnemonics removed, white space folded) is not a source
     string of the training split.

The msgid/msgstr pairs are read from `msgcat --no-wrap` output by a small reader of gettext's
own syntax; its entry count must equal msgfmt --statistics' or the catalogue fails.

  bench/catalogs_eval.py --model models/en-de --language de --output docs/catalogs_en-de.json
  bench/catalogs_eval.py --model models/en-fr --language fr --output docs/catalogs_en-fr.json
  bench/catalogs_eval.py --plot docs/catalogs.png docs/catalogs_en-de.json docs/catalogs_en-fr.json
  bench/catalogs_eval.py --table docs/catalogs_en-de.json docs/catalogs_en-fr.json  # Markdown
  bench/catalogs_eval.py --list --language de     # every installed catalogue, training or not
"""
import argparse
import collections
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
from eval_common import corpus_scores  # noqa: E402

DATA = os.path.join(REPO, "..", "shared", "data")
# Command-line tools (GNU), GNOME/GTK libraries, a package manager, a desktop service, a media
# framework: none of them, nor their source packages, in the training corpus.
DEFAULT_CATALOGS = ["diffutils", "wget", "shadow", "gnupg2", "glib20", "PackageKit",
                    "gst-plugins-base-1.0"]
FLAGS = ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16",
         "amx_tile", "amx_int8", "amx_bf16"]

# printf (C, POSIX positional %1$s, <inttypes.h> %<PRId64>), Python %(name)s, brace {0} {name}.
# No ' ' flag: "100% of" is not a directive.
DIRECTIVE = re.compile(
    r"%%"
    r"|%\([A-Za-z_][A-Za-z0-9_]*\)[-+#0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]"
    r"|%(?:\d+\$)?[-+#0']*(?:\d+|\*(?:\d+\$)?)?(?:\.(?:\d+|\*(?:\d+\$)?))?"
    r"(?:<PRI[a-zA-Z0-9]+>|(?:hh|h|ll|l|L|q|j|z|Z|t|I)?[diouxXeEfFgGaAcsSpnCm])"
    r"|\{[A-Za-z0-9_]*\}")
C_DIRECTIVE = re.compile(
    r"%(?:\d+\$)?[-+#0']*(?:\d+|\*(?:\d+\$)?)?(?:\.(?:\d+|\*(?:\d+\$)?))?"
    r"(?:<PRI[a-zA-Z0-9]+>|(?:hh|h|ll|l|L|q|j|z|Z|t|I)?[diouxXeEfFgGaAcsSpnCm])")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
           "\\": "\\", '"': '"', "?": "?", "'": "'"}


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# Reading PO text (as gettext writes it: msgcat --no-wrap output)

def unquote(literal):
    """The value of one C string literal of a PO file ("..." with gettext's escapes)."""
    s = literal.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError(f"not a string literal: {literal!r}")
    s, out, i = s[1:-1], [], 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e in ESCAPES:
            out.append(ESCAPES[e])
            i += 2
        elif e in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(chr(int(s[i + 1:j], 8)))
            i = j
        elif e == "x":
            j = i + 2
            while j < len(s) and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(s[i + 2:j], 16)))
            i = j
        else:
            raise ValueError(f"unknown escape \\{e} in {literal!r}")
    return "".join(out)


Entry = collections.namedtuple("Entry", "line msgctxt msgid msgid_plural msgstr flags")


def read_po(text):
    """Entries of PO text, obsolete ones left out: Entry(line of its first keyword, msgctxt or
    None, msgid, msgid_plural or None, [msgstr] or [msgstr[0], msgstr[1], ...], flags)."""
    entries, current, field, flags = [], None, None, set()

    def finish():
        if current is not None:
            forms = current["msgstr"]
            entries.append(Entry(current["line"], current.get("msgctxt"), current["msgid"],
                                 current.get("msgid_plural"),
                                 [forms[k] for k in sorted(forms)], frozenset(current["flags"])))

    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#,"):
            flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith("#"):
            continue
        if line.startswith('"'):
            value = unquote(line)
            if field[0] == "msgstr":
                current["msgstr"][field[1]] += value
            else:
                current[field[0]] += value
            continue
        keyword, _, literal = line.partition(" ")
        value = unquote(literal)
        if keyword in ("msgctxt", "msgid") and (
                current is None or keyword == "msgctxt" or "msgid" in current):
            finish()
            current, flags = {"line": number, "msgstr": {}, "flags": flags}, set()
        if keyword in ("msgctxt", "msgid", "msgid_plural"):
            current[keyword], field = value, (keyword, None)
        elif keyword == "msgstr":
            current["msgstr"][0], field = value, ("msgstr", 0)
        elif re.fullmatch(r"msgstr\[\d+\]", keyword):
            index = int(keyword[7:-1])
            current["msgstr"][index], field = value, ("msgstr", index)
        else:
            raise ValueError(f"line {number}: unknown keyword {keyword!r}")
    finish()
    return entries


def read_catalog(path):
    """Entries of a PO file as gettext reads it (msgcat --no-wrap), header apart, by key
    (msgctxt, msgid); and the header's text."""
    out = run(["msgcat", "--no-wrap", "--no-location", path])
    if out.returncode != 0:
        raise RuntimeError(f"msgcat {path}: {out.stderr.strip()}")
    header, entries = "", collections.OrderedDict()
    for e in read_po(out.stdout):
        if e.msgid == "" and e.msgctxt is None:
            header = e.msgstr[0]
        else:
            entries[e.msgctxt, e.msgid] = e
    return entries, header


def statistics(path):
    """msgfmt --statistics of a file: translated, fuzzy, untranslated."""
    out = run(["msgfmt", "--statistics", "-o", os.devnull, path])
    counts = {"translated": 0, "fuzzy": 0, "untranslated": 0}
    for number, kind in re.findall(r"(\d+) (translated|fuzzy|untranslated)", out.stderr):
        counts[kind] = int(number)
    return counts


# ---------------------------------------------------------------------------------------------
# Catalogues and where they come from

def training_packages():
    """Binary packages of the training corpus and their source packages."""
    binaries = set()
    with open(os.path.join(DATA, "packages.txt")) as f:
        for line in f:
            if line.split():
                binaries.add(line.split()[0])
    sources = set(binaries)
    out = run(["apt-cache", "show", "--no-all-versions"] + sorted(binaries))
    sources.update(re.findall(r"^Source: (\S+)", out.stdout, re.M))
    return binaries, sources


def origin(mo):
    """(binary package, source package) that installed `mo`."""
    out = run(["dpkg", "-S", mo])
    binary = out.stdout.split(":", 1)[0].strip() if out.returncode == 0 else ""
    source = ""
    if binary:
        source = run(["dpkg-query", "-W", "-f=${source:Package}", binary]).stdout.strip()
    return binary, source or binary


def normalise(msgid):
    """A msgid as the training corpus' sources were normalised: mnemonics out, space folded."""
    text = re.sub(r"[_&~](?=\w)", "", msgid)
    return " ".join(text.split())


def training_sources(language):
    path = os.path.join(DATA, f"ui.en-{language}.train.tsv")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return {" ".join(line.split("\t", 1)[0].split()) for line in f}


# ---------------------------------------------------------------------------------------------
# Checks

POSITION = re.compile(r"^%(\d+)\$")


def unnumbered(directive):
    """%2$s -> %s: rpt numbers a c-format msgstr's directives when the model moved them."""
    return POSITION.sub("%", directive)


def directives(text):
    return collections.Counter(unnumbered(d) for d in DIRECTIVE.findall(text))


def in_order(entry):
    """None when the msgid has no unnumbered C directive (or a numbered one), else whether each
    msgstr form has them in the msgid's order (form 0: the singular's or the plural's), or
    numbered (%2$d) with each number the msgid's directive of that type."""
    def sequence(text):
        found = C_DIRECTIVE.findall(text)
        return None if any("$" in d for d in found) else found
    singular = sequence(entry.msgid)
    plural = sequence(entry.msgid_plural) if entry.msgid_plural is not None else singular
    if not singular and not plural:
        return None
    def numbered_right(found, source):  # %N$x is the source's N-th directive, x its type
        for d in found:
            number = POSITION.match(d)
            if not number or not source or int(number.group(1)) > len(source) or \
                    source[int(number.group(1)) - 1] != unnumbered(d):
                return False
        return True
    for index, form in enumerate(entry.msgstr):
        found = C_DIRECTIVE.findall(form)
        if any("$" in d for d in found):  # numbered: in any order, each the right argument
            if not numbered_right(found, plural) and not (
                    index == 0 and numbered_right(found, singular)):
                return False
            continue
        if found != plural and not (index == 0 and found == singular):
            return False
    return True


def kept_directives(entry):
    """None when the msgid has no directive, else whether every msgstr form has the msgid's
    (form 0 may be the singular's or the plural's: French form 0 serves n == 0 too)."""
    singular = directives(entry.msgid)
    plural = directives(entry.msgid_plural) if entry.msgid_plural is not None else singular
    if not singular and not plural:
        return None
    for index, form in enumerate(entry.msgstr):
        found = directives(form)
        if found != plural and not (index == 0 and found == singular):
            return False
    return True


def msgfmt_check(path):
    """msgfmt --check: exit status, error lines (as gettext wrote them, the file named without
    its folder), the fatal count."""
    out = run(["msgfmt", "--check", "-o", os.devnull, os.path.basename(path)],
              cwd=os.path.dirname(os.path.abspath(path)))
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    fatal = re.search(r"found (\d+) fatal errors?", out.stderr)
    errors = int(fatal.group(1)) if fatal else (1 if out.returncode else 0)
    return out.returncode, errors, lines


def with_c_format(path, target):
    """`path` (written by msgcat --no-wrap) with `#, c-format` before each entry whose msgid
    holds a C directive; returns {line of the entry's first keyword in target: key}."""
    text = run(["msgcat", "--no-wrap", "--no-location", path]).stdout
    entries = read_po(text)
    flagged = {e.line: e for e in entries
               if e.msgid and C_DIRECTIVE.search(e.msgid + (e.msgid_plural or ""))}
    lines, where = text.split("\n"), {}
    out = []
    for number, line in enumerate(lines, 1):
        if number in flagged:
            if "c-format" not in flagged[number].flags:
                out.append("#, c-format")
            where[len(out) + 1] = (flagged[number].msgctxt, flagged[number].msgid)
        out.append(line)
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    return where


def failing_entries(lines, where, path):
    """Keys of the entries msgfmt's error lines name (file:LINE: ...)."""
    starts = sorted(where)
    keys = set()
    for line in lines:
        match = re.match(re.escape(os.path.basename(path)) + r":(\d+):", line)
        if match:
            number = int(match.group(1))
            before = [s for s in starts if s <= number]
            if before:
                keys.add(where[before[-1]])
    return keys


def statistics_median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def flat(text):
    return " ".join(text.split())


def evaluate_catalog(args, name, work, seen):
    mo = f"/usr/share/locale/{args.language}/LC_MESSAGES/{name}.mo"
    raw, ref, pot, out = (os.path.join(work, f"{name}.{suffix}")
                          for suffix in ("mo.po", "ref.po", "pot", "rpt.po"))
    subprocess.run(["msgunfmt", mo, "-o", raw], check=True)
    charset = re.search(r"charset=([^\\\s\"]+)", open(raw, encoding="latin-1").read())
    subprocess.run(["msgconv", "-t", "UTF-8", "-o", ref, raw], check=True)
    subprocess.run(["msgfilter", "--keep-header", "-i", ref, "-o", pot, "sed", "-e", "d"],
                   check=True)
    template = statistics(pot)
    if template["translated"] or template["fuzzy"]:
        raise RuntimeError(f"{name}: the template still has translations: {template}")
    # A .mo keeps no flags; xgettext flags a C program's strings `#, c-format`, and rpt keeps
    # such a msgstr's directives in an order printf reads right: the template gets the flags.
    with_c_format(pot, pot)

    cmd = [args.rpt_translate, "--model", args.model, "--format", "po", "--input", pot,
           "--output", out, "--verbose", "--no-fuzzy", "--quiet", "--target-language",
           args.language] + (["--beam-size", str(args.beam_size)] if args.beam_size else []) + \
          (["--threads", str(args.threads)] if args.threads else [])
    walls, translates, same = [], [], True
    for attempt in range(args.runs):  # the first run's output is judged; medians are timed
        target = out if attempt == 0 else f"{out}.{attempt}"
        started = time.perf_counter()
        done = run(cmd[:cmd.index("--output") + 1] + [target] + cmd[cmd.index("--output") + 2:])
        walls.append(time.perf_counter() - started)
        if done.returncode != 0:
            break
        translates.append(float(re.search(r"translate ([\d.]+) s", done.stderr).group(1)))
        if attempt == 0:
            verbose = done.stderr
        else:
            with open(out, "rb") as a, open(target, "rb") as b:
                same = same and a.read() == b.read()
    wall = statistics_median(walls)
    row = {"catalog": name, "mo": mo, "charset": charset.group(1) if charset else None,
           "rpt_exit": done.returncode, "wall_s": round(wall, 2),
           "runs": len(walls), "wall_s_runs": [round(w, 2) for w in walls]}
    if done.returncode != 0:
        row["rpt_error"] = done.stderr.strip().splitlines()[-5:]
        return row, None
    row["translate_s"] = round(statistics_median(translates), 3)
    row["translate_s_runs"] = translates
    row["runs_identical"] = same
    settings = re.search(r"; (\w+), beam (\d+), batch (\d+)", verbose)
    segments = re.search(r"(\d+) text units, (\d+) segments, (\d+) units kept as source",
                         verbose)
    row["segments"] = int(segments.group(2)) if segments else None
    row["units_kept_as_source"] = int(segments.group(3)) if segments else None
    spans = re.search(r"(\d+) protected spans \(all kept: (\w+)\)", verbose)
    row["protected_spans"] = int(spans.group(1)) if spans else None
    row["spans_all_kept"] = spans.group(2) == "yes" if spans else None

    # gettext's judgement
    rc, errors, lines = msgfmt_check(out)
    row["msgfmt_check"] = {"exit": rc, "errors": errors, "first_lines": lines[:args.show]}
    cat = run(["msgcat", out])
    row["msgcat_exit"] = cat.returncode
    with open(out, encoding="utf-8") as f:
        row["msgcat_identical"] = cat.returncode == 0 and cat.stdout == f.read()
    flagged_ref, flagged_out = os.path.join(work, f"{name}.ref.cf.po"), os.path.join(
        work, f"{name}.rpt.cf.po")
    where_ref = with_c_format(ref, flagged_ref)
    where_out = with_c_format(out, flagged_out)
    _, _, ref_lines = msgfmt_check(flagged_ref)
    _, _, out_lines = msgfmt_check(flagged_out)
    ref_fail = failing_entries(ref_lines, where_ref, flagged_ref)
    out_fail = failing_entries(out_lines, where_out, flagged_out)
    only_rpt = sorted(out_fail - ref_fail, key=lambda k: (k[0] or "", k[1]))
    row["c_format_check"] = {
        "entries_flagged": len(where_out), "reference_fails": len(ref_fail),
        "rpt_fails": len(out_fail), "rpt_fails_where_reference_passes": len(only_rpt),
        "first_lines": out_lines[:args.show],
        "entries": only_rpt[:args.show]}

    references, ref_header = read_catalog(ref)
    outputs, out_header = read_catalog(out)
    row["c_format_check"]["entries"] = [
        {"msgctxt": k[0], "msgid": k[1], "msgstr": outputs[k].msgstr,
         "reference": references[k].msgstr if k in references else None}
        for k in row["c_format_check"]["entries"]]
    counted = statistics(out)
    if sum(counted.values()) != len(outputs):
        raise RuntimeError(f"{name}: read {len(outputs)} entries, msgfmt counts {counted}")
    row["header"] = {k: (re.search(rf"^{k}: (.*)$", out_header, re.M) or [None, None])[1]
                     for k in ("Language", "Plural-Forms", "Content-Type")}
    row["entries"] = len(outputs)
    row["plural_entries"] = sum(e.msgid_plural is not None for e in outputs.values())
    row["translated"] = sum(all(e.msgstr) for e in outputs.values())
    row["msgfmt_statistics"] = counted
    row["msgid_in_training"] = (None if seen is None else sum(
        normalise(k[1]) in seen for k in outputs))

    kept = [kept_directives(e) for e in outputs.values()]
    kept_ref = [kept_directives(e) for e in references.values()]
    row["with_directives"] = sum(k is not None for k in kept)
    row["directives_kept"] = sum(k is True for k in kept)
    row["reference_directives_kept"] = sum(k is True for k in kept_ref)
    order = [in_order(e) for e in outputs.values()]
    row["with_c_directives"] = sum(k is not None for k in order)
    row["c_directives_in_order"] = sum(k is True for k in order)
    row["reference_c_directives_in_order"] = sum(in_order(e) is True
                                                 for e in references.values())
    row["out_of_order"] = [{"msgid": e.msgid, "msgstr": e.msgstr}
                           for e, k in zip(outputs.values(), order) if k is False][:args.show]
    row["directives_lost"] = [{"msgid": e.msgid, "msgstr": e.msgstr}
                              for e, k in zip(outputs.values(), kept) if k is False][:args.show]

    pairs = []  # (hypothesis, reference, msgid unseen in training)
    for key, e in outputs.items():
        r = references.get(key)
        if r is None:
            continue
        unseen = seen is None or normalise(key[1]) not in seen
        for index in range(min(2, len(e.msgstr), len(r.msgstr))):
            if e.msgstr[index] and r.msgstr[index]:
                pairs.append((flat(e.msgstr[index]), flat(r.msgstr[index]), unseen))
    row["scored_strings"] = len(pairs)
    row["scores"] = corpus_scores([p[0] for p in pairs], [p[1] for p in pairs])
    row["scored_unseen"] = sum(p[2] for p in pairs)
    row["scores_unseen"] = corpus_scores([p[0] for p in pairs if p[2]],
                                         [p[1] for p in pairs if p[2]])
    row["s_per_1000_entries"] = {"wall": round(1000 * wall / max(1, len(outputs)), 1),
                                  "translate": round(1000 * row["translate_s"] /
                                                     max(1, len(outputs)), 1)}
    setting = {"device": settings.group(1), "beam": int(settings.group(2)),
               "batch": int(settings.group(3))} if settings else None
    return row, (pairs, setting)


def binary_identity(path):
    """The rpt-translate binary measured: its SHA-256 prefix and modification time."""
    import hashlib
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return {"sha256": digest, "mtime": time.strftime("%Y-%m-%d %H:%M:%S",
                                                     time.localtime(os.path.getmtime(path)))}


def hardware():
    info = run(["lscpu"]).stdout
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                  if line.startswith("Model name")), "")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines()
                  if line.startswith("Flags")), [])
    return {"cpu": model, "cores": os.cpu_count(), "machine": platform.machine(),
            "flags": [f for f in FLAGS if f in flags]}


def survey(args, binaries, sources):
    seen = training_sources(args.language)
    for mo in sorted(os.listdir(f"/usr/share/locale/{args.language}/LC_MESSAGES")):
        if not mo.endswith(".mo"):
            continue
        path = f"/usr/share/locale/{args.language}/LC_MESSAGES/{mo}"
        binary, source = origin(path)
        text = subprocess.run(f"msgunfmt --no-wrap '{path}' | msgconv -t UTF-8",
                              shell=True, capture_output=True, text=True).stdout
        ids = [e.msgid for e in read_po(text) if e.msgid]
        overlap = (sum(normalise(i) in seen for i in ids) / max(1, len(ids))) if seen else 0
        training = binary in binaries or source in sources
        print(f"{mo[:-3]:30} {binary:32} {source:26} {len(ids):6} "
              f"{'TRAINING' if training else 'ok':8} {100 * overlap:5.1f}% msgids in train")


def evaluate(args):
    binaries, sources = training_packages()
    if args.list:
        survey(args, binaries, sources)
        return
    seen = training_sources(args.language)
    catalogs, refused = [], []
    for name in args.catalogs:
        mo = f"/usr/share/locale/{args.language}/LC_MESSAGES/{name}.mo"
        if not os.path.exists(mo):
            refused.append({"catalog": name, "why": "not installed"})
            continue
        binary, source = origin(mo)
        if not binary or binary in binaries or source in sources:
            refused.append({"catalog": name, "binary": binary, "source": source,
                            "why": "training data" if binary else "no package owns it"})
            continue
        catalogs.append((name, binary, source))
    for r in refused:
        print(f"catalogs_eval: {r['catalog']} refused: {r['why']}", file=sys.stderr)
    rows, pairs, setting = [], [], None
    load = os.getloadavg()  # the machines are shared: the timings' context
    measured = binary_identity(args.rpt_translate)
    work = args.keep or tempfile.mkdtemp(prefix="catalogs_eval.")
    os.makedirs(work, exist_ok=True)
    try:
        for name, binary, source in catalogs:
            row, extra = evaluate_catalog(args, name, work, seen)
            row = {"catalog": name, "binary_package": binary, "source_package": source,
                   "version": run(["dpkg-query", "-W", "-f=${Version}", binary]).stdout, **row}
            rows.append(row)
            if extra:
                pairs += extra[0]
                setting = setting or extra[1]
            print(f"catalogs_eval: {args.language} {name}: {row.get('entries')} entries, "
                  f"{row['wall_s']} s, msgfmt --check exit "
                  f"{row.get('msgfmt_check', {}).get('exit')}, chrF "
                  f"{row.get('scores', {}).get('chrf')}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    ok = [r for r in rows if r["rpt_exit"] == 0]

    def total(key):
        return sum(r[key] for r in ok)
    entries, wall, translate = total("entries"), total("wall_s"), total("translate_s")
    totals = {
        "catalogs": len(rows), "rpt_failed": len(rows) - len(ok), "entries": entries,
        "plural_entries": total("plural_entries"), "translated": total("translated"),
        "msgfmt_check_passed": sum(r["msgfmt_check"]["exit"] == 0 for r in ok),
        "msgfmt_check_errors": sum(r["msgfmt_check"]["errors"] for r in ok),
        "msgcat_passed": sum(r["msgcat_exit"] == 0 for r in ok),
        "msgcat_identical": sum(r["msgcat_identical"] for r in ok),
        "c_format_flagged": sum(r["c_format_check"]["entries_flagged"] for r in ok),
        "c_format_reference_fails": sum(r["c_format_check"]["reference_fails"] for r in ok),
        "c_format_rpt_fails": sum(r["c_format_check"]["rpt_fails"] for r in ok),
        "c_format_rpt_fails_where_reference_passes": sum(
            r["c_format_check"]["rpt_fails_where_reference_passes"] for r in ok),
        "with_directives": total("with_directives"), "directives_kept": total("directives_kept"),
        "reference_directives_kept": total("reference_directives_kept"),
        "with_c_directives": total("with_c_directives"),
        "c_directives_in_order": total("c_directives_in_order"),
        "reference_c_directives_in_order": total("reference_c_directives_in_order"),
        "directives_kept_pct": round(100 * total("directives_kept") /
                                     max(1, total("with_directives")), 1),
        "msgid_in_training": None if seen is None else total("msgid_in_training"),
        "scored_strings": len(pairs),
        "scores": corpus_scores([p[0] for p in pairs], [p[1] for p in pairs]),
        "scored_unseen": sum(p[2] for p in pairs),
        "scores_unseen": corpus_scores([p[0] for p in pairs if p[2]],
                                       [p[1] for p in pairs if p[2]]),
        "runs_identical": sum(r["runs_identical"] for r in ok),
        "wall_s": round(wall, 2), "translate_s": round(translate, 2),
        "s_per_1000_entries": {"wall": round(1000 * wall / max(1, entries), 1),
                                "translate": round(1000 * translate / max(1, entries), 1)}}
    commit = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).stdout.strip()
    gettext = run(["msgfmt", "--version"]).stdout.splitlines()[0]
    result = {
        "model": os.path.basename(os.path.normpath(args.model)), "language": args.language,
        "commit": commit, "date": time.strftime("%Y-%m-%d"), "hardware": hardware(),
        "load_average_at_start": [round(x, 2) for x in load], "load_average_at_end": [
            round(x, 2) for x in os.getloadavg()],
        "settings": {"command": "rpt-translate --format po --no-fuzzy --verbose --quiet "
                                f"--target-language {args.language}" +
                                (f" --beam-size {args.beam_size}" if args.beam_size else "") +
                                (f" --threads {args.threads}" if args.threads else ""),
                     **(setting or {}), "threads": args.threads or "all",
                     "compute": "float32 (default)", "entries_capped": False,
                     "runs": args.runs, "times": "medians of the runs"},
        "rpt_translate": measured if measured == binary_identity(args.rpt_translate) else
        {"changed_during_the_run": [measured, binary_identity(args.rpt_translate)]},
        "gettext": gettext, "training_packages": len(binaries), "refused": refused,
        "catalogs": rows, "totals": totals}
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = []
    for path in args.inputs:
        with open(path) as f:
            data.append(json.load(f))
    names = []
    for d in data:
        names += [r["catalog"] for r in d["catalogs"] if r["catalog"] not in names]
    fig, (chrf, order) = plt.subplots(1, 2, figsize=(10, 3.6),
                                      gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / max(1, len(data))
    for i, d in enumerate(data):
        rows = {r["catalog"]: r for r in d["catalogs"] if r.get("scores")}
        present = [n for n in names if n in rows]
        xs = [names.index(n) + (i - (len(data) - 1) / 2) * width for n in present]
        bars = chrf.bar(xs, [rows[n]["scores"]["chrf"] for n in present], width,
                        label=f"en-{d['language']}")
        for bar, n in zip(bars, present):
            fails = rows[n]["c_format_check"]["rpt_fails_where_reference_passes"]
            passed = rows[n]["msgfmt_check"]["exit"] == 0 and fails == 0
            chrf.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 1,
                      "ok" if passed else f"x{fails}", ha="center", fontsize=7,
                      color="green" if passed else "red")
        order.bar(xs, [100 * rows[n]["c_directives_in_order"] /
                       max(1, rows[n]["with_c_directives"]) for n in present], width,
                  label=f"en-{d['language']}")
    for axis in (chrf, order):
        axis.set_xticks(range(len(names)))
        axis.set_xticklabels(names, rotation=20, fontsize=8, ha="right")
        axis.grid(axis="y", alpha=0.3)
    chrf.legend(fontsize=7, loc="upper right")
    chrf.set(ylabel="chrF vs the human msgstr", ylim=(0, 100),
             title="chrF; msgfmt --check, c-format added: ok / x(entries failing)")
    order.set(ylabel="% of entries with C directives", ylim=(90, 100.5),
              title="C directives kept in the msgid's order")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=72)


def percent(part, whole):
    return f"{100 * part / max(1, whole):.1f}%"


def table(args):
    """The Markdown table of docs/localization.md from the JSON files given as inputs."""
    print("| pair | catalogue (source package) | entries (plural) | msgid in training | "
          "translated | msgfmt --check | + c-format: entries failing / flagged (human) | "
          "directives kept | C directives in order, rpt / human | BLEU | chrF | wall s | "
          "s per 1,000 entries, wall / translate |")
    print("|---" * 13 + "|")
    for path in args.inputs:
        with open(path) as f:
            d = json.load(f)
        for r in d["catalogs"] + [dict(d["totals"], catalog="**all**")]:
            if r.get("rpt_exit", 0) != 0:
                print(f"| en-{d['language']} | {r['catalog']} | rpt-translate failed |")
                continue
            total = r["catalog"] == "**all**"
            c = r if total else r["c_format_check"]
            fails, flagged, ref = ((c["c_format_rpt_fails"], c["c_format_flagged"],
                                    c["c_format_reference_fails"]) if total else
                                   (c["rpt_fails"], c["entries_flagged"], c["reference_fails"]))
            check = (f"{r['msgfmt_check_passed']}/{r['catalogs']} pass" if total else
                     "pass" if r["msgfmt_check"]["exit"] == 0 else
                     f"**{r['msgfmt_check']['errors']} errors**")
            name = r["catalog"] if total else f"{r['catalog']} ({r['source_package']})"
            print(f"| en-{d['language']} | {name} | {r['entries']:,} ({r['plural_entries']}) | "
                  f"{100 * r['msgid_in_training'] / r['entries']:.1f}% | "
                  f"{r['translated']:,} | {check} | "
                  f"{'**' if fails else ''}{fails}{'**' if fails else ''} / {flagged:,} "
                  f"({ref}) | {r['directives_kept']:,}/{r['with_directives']:,} | "
                  f"{percent(r['c_directives_in_order'], r['with_c_directives'])} / "
                  f"{percent(r['reference_c_directives_in_order'], r['with_c_directives'])} | "
                  f"{r['scores']['bleu']} | {r['scores']['chrf']} | {r['wall_s']} | "
                  f"{r['s_per_1000_entries']['wall']} / {r['s_per_1000_entries']['translate']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--language", help="target language: de, fr (its .mo files)")
    ap.add_argument("--output", help="the JSON written (default: stdout)")
    ap.add_argument("--catalogs", nargs="+", default=DEFAULT_CATALOGS,
                    help="catalogue names (X of LC_MESSAGES/X.mo)")
    ap.add_argument("--rpt-translate", default=os.path.join(REPO, "build", "cli",
                                                            "rpt-translate"))
    ap.add_argument("--beam-size", type=int, default=0, help="0: rpt-translate's default")
    ap.add_argument("--threads", type=int, default=0, help="0: rpt-translate's default (all)")
    ap.add_argument("--runs", type=int, default=3,
                    help="rpt-translate runs per catalogue: median times (outputs compared)")
    ap.add_argument("--show", type=int, default=10, help="error lines and entries kept")
    ap.add_argument("--keep", help="keep the PO files in this folder")
    ap.add_argument("--list", action="store_true",
                    help="list the installed catalogues of --language and whether they are "
                         "training data")
    ap.add_argument("--plot", help="write a PNG from the JSON files given as inputs")
    ap.add_argument("--table", action="store_true",
                    help="print the Markdown table of the JSON files given as inputs")
    ap.add_argument("inputs", nargs="*")
    args = ap.parse_args()
    if args.table:
        table(args)
    elif args.plot:
        plot(args)
    elif args.language and (args.model or args.list):
        evaluate(args)
    else:
        sys.exit("give --model and --language (or --list --language), or --plot with JSON inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
