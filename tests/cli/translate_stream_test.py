#!/usr/bin/env python3
"""rpt-translate streams its output.

    translate_stream_test.py RPT_TRANSLATE MODEL_DIR

On a pipe, the first translation comes out while the input is still open (before the last line is
written); the streamed output is, line for line, what translating each line alone gives (also with
joiners admitted in groups, --admission-group); the
progress line appears when stderr is a terminal, ends with the full count, and never with --quiet
or on a pipe.
"""
import os
import pty
import select
import subprocess
import sys
import unittest

TRANSLATE, MODEL = sys.argv[1], sys.argv[2]
LINES = ["Open the file", "Save %s as", "Quit", "Open a window", "Cancel", "Close the file"]
TIMEOUT_SECONDS = 60


def translate(lines, *options, stderr=subprocess.PIPE):
    run = subprocess.run([TRANSLATE, "--model", MODEL, *options], input="".join(
        line + "\n" for line in lines), stdout=subprocess.PIPE, stderr=stderr, text=True,
        timeout=TIMEOUT_SECONDS, check=True)
    return run.stdout.splitlines(), run.stderr


def read_line(stream):
    ready, _, _ = select.select([stream], [], [], TIMEOUT_SECONDS)
    assert ready, f"no output line within {TIMEOUT_SECONDS} s"
    return stream.readline().rstrip("\n")


def terminal_stderr(*options):
    """rpt-translate's stderr when stderr is a terminal (a pseudo-terminal)."""
    controller, terminal = pty.openpty()
    try:
        translate(LINES, *options, stderr=terminal)
    finally:
        os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # EIO: the terminal's other end is closed and drained
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    return seen.decode(errors="replace")


class TranslateStreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.alone = [translate([line])[0][0] for line in LINES]

    def test_first_translation_comes_out_while_input_is_open(self):
        self.first_translation_while_input_is_open()

    def test_admission_in_groups_neither_stalls_nor_changes_the_output(self):
        # An idle decoder takes the one line there is (a group of 4 or not); then, batched, the
        # waiting join 3 at a time or all at once.
        self.first_translation_while_input_is_open("--batch-size", "4", "--admission-group", "4")
        self.assertEqual(translate(LINES, "--batch-size", "4", "--admission-group", "3")[0],
                         self.alone)

    def first_translation_while_input_is_open(self, *options):
        process = subprocess.Popen([TRANSLATE, "--model", MODEL, *options], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            process.stdin.write(LINES[0] + "\n")
            process.stdin.flush()
            # The rest of the input is not written yet: only streaming can answer now.
            self.assertEqual(read_line(process.stdout), self.alone[0])
            process.stdin.write("".join(line + "\n" for line in LINES[1:]))
            process.stdin.close()
            rest, errors = process.stdout.read(), process.stderr.read()
            process.wait(timeout=TIMEOUT_SECONDS)
        finally:
            process.kill()
        self.assertEqual(process.returncode, 0, errors)
        self.assertEqual(rest.splitlines(), self.alone[1:])

    def test_output_keeps_input_order_in_one_batch(self):
        self.assertEqual(translate(LINES, "--batch-size", "4")[0], self.alone)

    def test_a_last_line_without_a_newline_comes_back_without_one(self):
        def raw(text, *options):
            return subprocess.run([TRANSLATE, "--model", MODEL, "--quiet", *options],
                                  input=text.encode(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=TIMEOUT_SECONDS,
                                  check=True).stdout.decode()  # bytes: no newline translation
        first, last = self.alone[0], self.alone[-1]
        ended = f"{LINES[0]}\n\n{LINES[-1]}"
        self.assertEqual(raw(ended), f"{first}\n\n{last}")
        self.assertEqual(raw(ended + "\n"), f"{first}\n\n{last}\n")
        self.assertEqual(raw(ended + "\r\n"), f"{first}\n\n{last}\r\n")
        self.assertEqual(raw(""), "")
        two_best = raw(LINES[0], "--n-best", "2").split("\n")
        self.assertEqual(len(two_best), 2, "one newline between the two, none after")
        self.assertEqual(two_best[0], first)

    def test_progress_line_on_a_terminal_only(self):
        shown = terminal_stderr()
        self.assertIn(f"{len(LINES)}/{len(LINES)} segments", shown)
        self.assertIn("segments/s", shown)
        self.assertEqual(terminal_stderr("--quiet"), "")
        self.assertEqual(translate(LINES)[1], "")  # stderr a pipe


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
