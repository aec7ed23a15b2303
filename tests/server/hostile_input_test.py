"""Inputs a hostile client sends to rpt-server, against the real binary on loopback: protobuf
messages nested far past any request's shape (unknown groups 100,000 deep), a megabyte of nested
ICU braces and of nested tags in a text, over gRPC and the JSON API: each refused with the right
status, naming its limit, in under a second; 60 KB of them (just under the byte limit) answered
in under a second. All while a concurrent call completes, and the server keeps serving.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/hostile_input_test.py
"""
import os
import threading
import time
import unittest

import grpc

from rpt_server import REPO, GrpcTranslator, ServerProcess

MODEL = os.path.join(REPO, "models", "en-de")  # a model with span protection on
LEVELS = 100_000


def nested_groups(levels, inside=b""):
    """`levels` nested groups of unknown field 15 (start tag 0x7b, end tag 0x7c)."""
    return b"\x7b" * levels + inside + b"\x7c" * levels


def length_delimited(field, payload):
    """Field `field` as a length-delimited record (wire type 2) holding `payload`."""
    tag, length, out = (field << 3) | 2, len(payload), bytearray()
    for value in (tag, length):
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out) + payload


def nested_icu(size):
    """About `size` bytes of ICU plural messages, each inside the last."""
    unit = "{n, plural, one {"
    count = size // (len(unit) + 2)
    return unit * count + "x" + "}}" * count


def nested_tags(size):
    count = size // 7
    return "<b>" * count + "x" + "</b>" * count


class HostileInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={MODEL}", "--max-decoding-length", "2000"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def raw_call(self, method, body):
        call = self.grpc.channel.unary_unary(method)  # bytes in, bytes out
        try:
            call(body, timeout=10)
            return grpc.StatusCode.OK, ""
        except grpc.RpcError as error:
            return error.code(), error.details()

    def while_a_call_runs(self, check):
        """Runs `check` while a long translation is in flight; that call must still succeed."""
        answers = []

        def long_call():
            answers.append(self.grpc.translate("en-de", ["Save the file."] * 2, timeout=120,
                                               beam_size=4, max_length=300, min_length=300))

        running = threading.Thread(target=long_call)
        running.start()
        try:
            check()
        finally:
            running.join()
        self.assertEqual(len(answers), 1, "the concurrent call failed")
        self.assertEqual(len(answers[0].translations), 2)
        self.assertTrue(self.grpc.translate("en-de", ["Cancel"]).translations[0].hypotheses[0].text)
        self.assertIsNone(self.server.process.poll(), "the server is still running")

    def test_deep_protobuf_messages_are_invalid_argument(self):
        select = length_delimited(1, length_delimited(1, b"en-de"))
        bodies = {
            "unknown groups at the top": nested_groups(LEVELS),
            "unknown groups in the model selector":
                length_delimited(1, nested_groups(LEVELS)) + length_delimited(2, b"Cancel"),
            "unknown groups in the options":
                select + length_delimited(2, b"Cancel") + length_delimited(3, nested_groups(LEVELS)),
        }

        def check():
            for method in ("/rpt.v1.Translator/Translate", "/rpt.v1.Translator/TranslateStream"):
                for what, body in bodies.items():
                    with self.subTest(method=method, what=what):
                        started = time.monotonic()
                        if method.endswith("Stream"):
                            stream = self.grpc.channel.unary_stream(method)
                            try:
                                list(stream(body, timeout=10))
                                code, details = grpc.StatusCode.OK, ""
                            except grpc.RpcError as error:
                                code, details = error.code(), error.details()
                        else:
                            code, details = self.raw_call(method, body)
                        self.assertLess(time.monotonic() - started, 1.0)
                        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, details)
                        self.assertIn("more than 100 levels deep", details)
            # Messages gRPC itself decodes (ListModels, health): refused, the server unharmed.
            for method in ("/rpt.v1.Translator/ListModels", "/grpc.health.v1.Health/Check"):
                with self.subTest(method=method):
                    started = time.monotonic()
                    code, _ = self.raw_call(method, nested_groups(LEVELS))
                    self.assertLess(time.monotonic() - started, 1.0)
                    self.assertNotEqual(code, grpc.StatusCode.OK)
                    self.assertNotEqual(code, grpc.StatusCode.UNAVAILABLE)

        self.while_a_call_runs(check)

    def test_two_megabytes_of_nested_spans_are_refused_by_size(self):
        texts = {"ICU braces": nested_icu(2 << 20), "tags": nested_tags(2 << 20)}

        def check():
            for what, text in texts.items():
                with self.subTest(what=what, protocol="gRPC"):
                    started = time.monotonic()
                    with self.assertRaises(grpc.RpcError) as refused:
                        self.grpc.translate("en-de", [text], timeout=10)
                    self.assertLess(time.monotonic() - started, 1.0)
                    self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                    self.assertIn("bytes, over the limit of", refused.exception.details())
                with self.subTest(what=what, protocol="JSON"):
                    started = time.monotonic()
                    status, _, body = self.server.translate({"model": "en-de", "texts": [text]})
                    self.assertLess(time.monotonic() - started, 1.0)
                    self.assertEqual(status, 400, body)
                    self.assertIn("bytes, over the limit of", body["error"]["message"])

        self.while_a_call_runs(check)

    def test_nested_spans_are_answered_at_once(self):
        # The span recognizer, the segmenter and the tokenizer run on all of it. A nest the
        # recognizer takes as one span (an ICU message) is one placeholder and comes back intact;
        # one it does not (tags) is cut where it is too long for the model, and the parts with
        # nothing to translate (tags alone) come back as they were, only the word translated.
        for size, seconds in ((60_000, 1.0), ((1 << 20) - 64, 10.0)):
            nest = nested_icu(size)
            texts = {"ICU braces": f"Click {nest} to continue.", "tags": nested_tags(size)}

            def check():
                for what, text in texts.items():
                    with self.subTest(what=what, size=size):
                        started = time.monotonic()
                        reply = self.grpc.translate("en-de", [text], timeout=10)
                        got = reply.translations[0].hypotheses[0].text
                        if what == "ICU braces":
                            self.assertIn(nest, got)
                        else:
                            opening = text.index("x")
                            self.assertTrue(got.startswith(text[:opening - 4096]))
                            self.assertTrue(got.endswith(text[opening + 1 + 4096:]))
                        self.assertLess(time.monotonic() - started, seconds)

        self.while_a_call_runs(check)

    def test_pathological_layout_is_answered_at_once(self):
        # Each once took the segmenter quadratic time (about 10^10 steps at this size): a
        # sentence followed by 100,000 symbol words, 100,000 sentences without a letter, a
        # paragraph whose first line is 400 KB of spaces (split_sentences "sentences").
        texts = {"symbols": ("Done" + " \u2713" * 100_000, 1),
                 "no letters": ("? " * 100_000 + "Done.", 1),
                 "blank first line": (" " * 400_000 + "x" + "\nx" * 2_000, 3)}
        for what, (text, split) in texts.items():
            with self.subTest(what=what):
                started = time.monotonic()
                reply = self.grpc.translate("en-de", [text], timeout=60, max_length=8,
                                            split_sentences=split, use_cache=False)
                self.assertTrue(reply.translations[0].hypotheses[0].text)
                self.assertLess(time.monotonic() - started, 20.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
