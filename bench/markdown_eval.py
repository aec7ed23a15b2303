#!/usr/bin/python3
"""Markdown documents through the real rpt-server: do they come back as the same document?

Each file (by default every .md of 1-20 kB under Debian's /usr/share/doc: READMEs, changelogs,
guides) is translated whole by the JSON API (cache off) as format "markdown" and, for
comparison, as plain "text". Source and translation are rendered to HTML by Python-Markdown
(Debian python3-markdown; fenced code and tables), a parser other than rpt's md4c, and compared:
  shape   the elements in document order (tag names) are the same;
  code    every code block (<pre>) is the same, byte for byte;
  inline  inline code (<code> outside <pre>) and link destinations are the same.
Prints one line per file that differs, and a JSON summary with --json (docs/documents.md cites it).

  bench/markdown_eval.py --server build/server/rpt-server --model models/en-de \\
      --json docs/markdown_en-de.json
"""
import argparse
import glob
import json
import os
import platform
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "server"))


def files_under(root, smallest, largest):
    found = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True)):
        if os.path.islink(path) or not smallest <= os.path.getsize(path) <= largest:
            continue
        with open(path, "rb") as file:
            data = file.read()
        try:
            found.append((path, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return found


def reading(text):
    """(tags, code blocks, inline code and link destinations) of `text` as Python-Markdown reads it."""
    import lxml.html
    import markdown
    html = markdown.markdown(text, extensions=["fenced_code", "tables"])
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    tags = [e.tag for e in root.iter() if isinstance(e.tag, str)]
    code = [e.text_content() for e in root.iter("pre")]
    inline = [e.text_content() for e in root.iter("code") if e.getparent().tag != "pre"]
    inline += [e.get("href") for e in root.iter("a")]
    return tags, code, inline


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--server", default=os.path.join(REPO, "build", "server", "rpt-server"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--root", default="/usr/share/doc")
    ap.add_argument("--smallest", type=int, default=1000)
    ap.add_argument("--largest", type=int, default=20000)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ["RPT_SERVER_BINARY"] = args.server
    from rpt_server import ServerProcess

    documents = files_under(args.root, args.smallest, args.largest)
    if args.limit:
        documents = documents[:args.limit]
    name = os.path.basename(os.path.normpath(args.model))
    server = ServerProcess(["--model", f"{name}={args.model}", "--threads", str(args.threads)])
    totals = {fmt: {"files": 0, "shape": 0, "code": 0, "inline": 0, "code_blocks": 0,
                    "seconds": 0.0} for fmt in ("markdown", "text")}
    try:
        for path, text in documents:
            source = reading(text)
            for fmt in ("markdown", "text"):
                start = time.monotonic()
                status, _, body = server.translate(
                    {"model": name, "texts": [text],
                     "options": {"format": fmt, "use_cache": False}}, timeout=600)
                if status != 200:
                    raise SystemExit(f"{path} ({fmt}): HTTP {status} {body}")
                t = totals[fmt]
                t["seconds"] += time.monotonic() - start
                out = reading(body["translations"][0]["hypotheses"][0]["text"])
                same = [out[k] == source[k] for k in range(3)]
                t["files"] += 1
                t["code_blocks"] += len(source[1])
                for key, ok in zip(("shape", "code", "inline"), same):
                    t[key] += ok
                if not all(same):
                    print(f"{fmt:8} {path}: " + ", ".join(
                        k for k, ok in zip(("shape", "code", "inline"), same) if not ok))
    finally:
        server.close()
    for fmt, t in totals.items():
        print(f"{fmt:8} {t['files']} files ({t['code_blocks']} code blocks): same shape "
              f"{t['shape']}, code {t['code']}, inline code and links {t['inline']}; "
              f"{t['seconds']:.1f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"model": args.model, "root": args.root, "cpu": platform.processor() or
                       platform.machine(), "totals": totals}, out, indent=1)
            out.write("\n")


if __name__ == "__main__":
    main()
