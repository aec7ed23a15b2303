#!/usr/bin/env python3
"""rpt-spans end to end: one JSON line per input line, offsets into the line, tag partners,
--no-accelerators, files as arguments, an unreadable file refused."""
import json
import subprocess
import sys
import tempfile

RPT_SPANS = sys.argv[1]


def run(lines, *args):
    out = subprocess.run([RPT_SPANS, *args], input="".join(l + "\n" for l in lines),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(l)["spans"] for l in out.splitlines()]


def main():
    lines = ["Save %s as <b>%1$s</b>", "", "50% done", "_Open {count, plural, one {#} other {#}}"]
    result = run(lines)
    assert len(result) == len(lines), result
    first = result[0]
    assert [(s["text"], s["kind"]) for s in first] == [
        ("%s", "printf"), ("<b>", "tag"), ("%1$s", "printf"), ("</b>", "tag")], first
    assert [s["partner"] for s in first] == [-1, 3, -1, 1], first
    assert [s["closing"] for s in first] == [False, False, False, True], first
    emphasis = run(["Save **all** files"])[0]  # symmetric markers: the flag tells them apart
    assert [(s["text"], s["partner"], s["closing"]) for s in emphasis] == [
        ("**", 1, False), ("**", 0, True)], emphasis
    for s in first:
        assert lines[0].encode()[s["begin"]:s["end"]].decode() == s["text"], s
    assert result[1] == [], result
    assert [(s["text"], s["kind"]) for s in result[2]] == [("50", "number")], result  # no %
    assert [s["kind"] for s in result[3]] == ["accelerator", "icu_message"], result[3]
    assert [s["kind"] for s in run(lines[3:], "--no-accelerators")[0]] == ["icu_message"]

    # Byte offsets, not characters; a line that is not UTF-8 still gets its line.
    utf8 = run(["é %d"])[0]
    assert (utf8[0]["begin"], utf8[0]["end"]) == (3, 5), utf8
    raw = subprocess.run([RPT_SPANS], input=b"\xff %s\r\n", capture_output=True, check=True).stdout
    assert json.loads(raw)["spans"][0]["begin"] == 2, raw

    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("%1 of %2\n")
        f.flush()
        from_file = subprocess.run([RPT_SPANS, f.name, f.name], capture_output=True, text=True,
                                   check=True).stdout.splitlines()
        assert len(from_file) == 2 and "positional" in from_file[0], from_file
    missing = subprocess.run([RPT_SPANS, "/nonexistent/file"], capture_output=True, text=True)
    assert missing.returncode == 1 and "cannot read" in missing.stderr, missing
    print("rpt-spans: ok")


if __name__ == "__main__":
    main()
