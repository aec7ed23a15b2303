"""The JSON API of rpt-server (POST /v1/translate, GET /v1/models) through Python's http.client
against the real binary on loopback: answers equal to gRPC's, every status and error body, the
metrics' protocol label, and a drain with HTTP calls in flight.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/http_api_test.py
"""
import gzip
import http.client
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
import zlib

from rpt_server import FIXTURE_MODEL, REPO, GrpcTranslator, ServerProcess

TEXTS = ["Save the file.", "Open a new window.", "The file could not be opened."]


def long_work(texts, length):
    """A body that decodes exactly `length` tokens per text: still running while a test acts."""
    return {"model": "en-de", "texts": ["Save the file."] * texts,
            "options": {"beam_size": 4, "max_length": length, "min_length": length}}


class HttpApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-input-length",
                                    "32", "--max-texts-per-request", "8",
                                    "--max-decoding-length", "2000",
                                    "--http-max-body-bytes", "4096"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def assert_error(self, answer, http_status, code, message_part):
        status, _, body = answer
        self.assertEqual(status, http_status, body)
        self.assertEqual(set(body), {"error"})
        self.assertEqual(body["error"]["code"], code)
        self.assertIn(message_part, body["error"]["message"])

    def test_translation_equals_the_grpc_answer(self):
        options = {"beam_size": 4, "n_best": 2, "return_scores": True, "return_tokens": True}
        status, headers, body = self.server.translate(
            {"model": "en-de", "texts": TEXTS, "options": options})
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Content-Type"], "application/json")
        expected = self.grpc.translate("en-de", TEXTS, **options)
        self.assertEqual(body["model"], expected.model)
        self.assertEqual(len(body["translations"]), len(TEXTS))
        for got, want in zip(body["translations"], expected.translations):
            self.assertEqual(got["source_tokens"], want.source_tokens)
            self.assertEqual(got["target_tokens"], want.target_tokens)
            self.assertEqual([h["text"] for h in got["hypotheses"]],
                             [h.text for h in want.hypotheses])
            self.assertEqual([h["tokens"] for h in got["hypotheses"]],
                             [list(h.tokens) for h in want.hypotheses])
            for h, w in zip(got["hypotheses"], want.hypotheses):
                self.assertTrue(math.isclose(h["score"], w.score, rel_tol=1e-6), (h, w))
        self.assertTrue(all(t["hypotheses"][0]["text"] for t in body["translations"]))

    def test_span_protection_is_reported_and_can_be_turned_off(self):
        texts = ["Save %s now", "Open"]
        for protect in (True, False):
            status, _, body = self.server.translate(
                {"model": "en-de", "texts": texts, "options": {"protect_spans": protect}})
            self.assertEqual(status, 200, body)
            first = body["translations"][0]
            self.assertEqual(first["protected_spans"], 1 if protect else 0, body)
            for translation in body["translations"]:
                self.assertIn("spans_kept", translation["hypotheses"][0])
        status, _, body = self.server.translate(
            {"model": "en-de", "texts": texts, "options": {"protect_spans": [1]}})
        self.assertEqual(status, 400, body)

    def test_routes_by_language_pair_and_lists_models(self):
        status, _, body = self.server.translate(
            {"source_language": "en", "target_language": "de", "texts": ["Cancel"]})
        self.assertEqual((status, body["model"]), (200, "en-de"))
        status, headers, data = self.server.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        models = json.loads(data)["models"]
        self.assertEqual([m["name"] for m in models], ["en-de"])
        self.assertEqual(models[0]["source_language"], "en")
        self.assertEqual(models[0]["max_input_length"], 32)

    def test_invalid_arguments_are_400_naming_the_problem(self):
        translate = self.server.translate
        self.assert_error(translate({"model": "en-de", "texts": []}), 400, "INVALID_ARGUMENT",
                          "texts is empty")
        self.assert_error(translate({"model": "en-de", "texts": ["Cancel"],
                                     "options": {"beam_size": 1000}}),
                          400, "INVALID_ARGUMENT", "options.beam_size is 1000")
        self.assert_error(translate({"model": "en-de", "texts": ["a"] * 9}), 400,
                          "INVALID_ARGUMENT", "over the limit of 8")

    def test_blank_texts_come_back_as_sent(self):
        blanks = ["", "\n", "\t\r\n", "\u00a0", "\u2000\u200b", "\u3000", "\ufeff",
                  " \u00a0\t\u3000\n", "\x01\x7f"]
        status, _, body = self.server.translate({"texts": ["ok"] + blanks[:7]})
        self.assertEqual(status, 200, body)
        status, _, rest = self.server.translate({"texts": blanks[7:]})
        self.assertEqual(status, 200, rest)
        answers = body["translations"][1:] + rest["translations"]
        self.assertEqual([t["hypotheses"][0]["text"] for t in answers], blanks)
        self.assertEqual({t["segments"] for t in answers}, {0})

    def test_paragraphs_keep_their_layout_and_split_sentences_is_honoured(self):
        sentences = ["Open the file.", "Save the file as %s.", "Quit the program!"]
        status, _, alone = self.server.translate({"texts": sentences})
        self.assertEqual(status, 200, alone)
        parts = [t["hypotheses"][0]["text"] for t in alone["translations"]]
        text = " \t" + sentences[0] + "  " + sentences[1] + "\r\n\r\n- " + sentences[2] + " \n"
        for split in ["auto", "SPLIT_SENTENCES_AUTO", "sentences"]:
            with self.subTest(split=split):
                status, _, body = self.server.translate(
                    {"texts": [text], "options": {"split_sentences": split}})
                self.assertEqual(status, 200, body)
                self.assertEqual(body["translations"][0]["hypotheses"][0]["text"],
                                 " \t" + parts[0] + "  " + parts[1] + "\r\n\r\n- " + parts[2] + " \n")
                self.assertEqual(body["translations"][0]["segments"], 3)
        status, _, whole = self.server.translate(
            {"texts": [text], "options": {"split_sentences": "none"}})
        self.assertEqual(status, 200, whole)
        self.assertEqual(whole["translations"][0]["segments"], 1)
        self.assertTrue(whole["translations"][0]["hypotheses"][0]["text"].startswith(" \t"))
        self.assert_error(self.server.translate({"texts": [text],
                                                 "options": {"split_sentences": "often"}}),
                          400, "INVALID_ARGUMENT", "split_sentences")
        # An unknown name is refused with the choices; the proto name is taken too.
        self.assert_error(self.server.translate({"texts": [text], "options": {"format": "mdx"}}),
                          400, "INVALID_ARGUMENT",
                          "options.format is 'mdx'; it must be one of text, html, xml, po, "
                          "xliff, json, markdown")
        status, _, body = self.server.translate(
            {"texts": ["Save the file."], "options": {"format": "TEXT_FORMAT_MARKDOWN"}})
        self.assertEqual(status, 200, body)

    def test_the_python_client_keeps_blank_lines_in_place(self):
        """client/python does not send blank lines (Unicode's blanks included), like rpt-client."""
        def run(stdin):
            return subprocess.run(
                [sys.executable, os.path.join(REPO, "client", "python", "translate_client.py"),
                 "--server", f"127.0.0.1:{self.server.grpc_port}", "--model", "en-de"],
                input=stdin.encode(), capture_output=True, check=True).stdout.decode()

        first, last = run("Save the file.\n"), run("Cancel\n")
        self.assertTrue(first.strip() and last.strip())
        self.assertEqual(run("Save the file.\n\n \u00a0\t\u3000\nCancel\n"),
                         first + "\n\n" + last)

    def test_wrong_types_and_unknown_fields_are_400(self):
        translate = self.server.translate
        cases = [
            ({"texts": "Save the file."}, "texts must be an array of strings"),
            ({"texts": ["ok", 7]}, "texts[1] must be a string"),
            ({"model": 5, "texts": ["ok"]}, "model must be a string"),
            ({"texts": ["ok"], "options": {"beam_size": "four"}}, "options:"),
            ({"texts": ["ok"], "options": {"beam_size": -1}}, "options:"),
            ({"texts": ["ok"], "options": {"beam_sise": 2}}, "options:"),
            ({"texts": ["ok"], "options": []}, "options must be an object"),
            ({"texts": ["ok"], "timeout": "soon"}, "timeout must be a number"),
            ({"texts": ["ok"], "timeout": -1}, "timeout must be a positive number"),
            ({"texts": ["ok"], "text": ["typo"]}, 'unknown field "text"'),
            (["Save the file."], "must be a JSON object"),
        ]
        for body, message in cases:
            with self.subTest(body=body):
                self.assert_error(translate(body), 400, "INVALID_ARGUMENT", message)

    def test_invalid_json_is_400(self):
        # 1e999: a number out of range, once a 500 (the fuzzer's first find).
        for raw in [b"{", b"", b"not json", b'{"texts": ["a"]} extra',
                    b'{"texts": ["ok"], "timeout": 1e999}']:
            with self.subTest(raw=raw):
                status, _, data = self.server.request("POST", "/v1/translate", raw)
                self.assertEqual(status, 400, data)
                error = json.loads(data)["error"]
                self.assertEqual(error["code"], "INVALID_ARGUMENT")
                self.assertIn("the body is not valid JSON", error["message"])

    def test_invalid_utf8_is_400_naming_its_field(self):
        for raw, field in [(b'{"texts": ["ok", "caf\xe9"]}', "texts[1]"),
                           (b'{"texts": ["\xff"]}', "texts[0]"),
                           (b'{"model": "en-\xc3", "texts": ["ok"]}', "model"),
                           (b'{"texts": [], "options": {"format": "\xff"}}', "options.format"),
                           (b'{"texts": [], "\xff": 1}', "a field name after texts"),
                           (b'{"glossary": [{"source": "a", "target": "\xfe"}]}',
                            "glossary[0].target")]:
            with self.subTest(raw=raw):
                status, _, data = self.server.request("POST", "/v1/translate", raw)
                self.assertEqual(status, 400, data)
                error = json.loads(data)["error"]
                self.assertEqual(error["code"], "INVALID_ARGUMENT")
                self.assertEqual(error["message"], field + " is not valid UTF-8")

    def test_a_field_given_twice_is_400_naming_it(self):
        # nlohmann-json keeps the last of a name given twice: "Cancel" alone was translated.
        deepl = {"Authorization": "DeepL-Auth-Key test-key:fx"}
        for path, raw, field, headers in [
                ("/v1/translate", b'{"texts": ["Save the file."], "texts": ["Cancel"]}', "texts",
                 {}),
                ("/v1/translate", b'{"texts": ["ok"], "options": {"beam_size": 1, "n_best": 1, '
                                  b'"beam_size": 4}}', "options.beam_size", {}),
                ("/v1/translate", b'{"texts": ["ok"], "glossary": [{"source": "file", '
                                  b'"target": "Datei"}, {"source": "a", "source": "b"}]}',
                 "glossary[1].source", {}),
                ("/translate", b'{"q": "Save the file.", "source": "en", "target": "de", '
                               b'"q": "Cancel"}', "q", {}),
                ("/v2/translate", b'{"text": ["Save the file."], "target_lang": "DE", '
                                  b'"text": ["Cancel"]}', "text", deepl)]:
            with self.subTest(raw=raw):
                status, _, data = self.server.request(
                    "POST", path, raw, {"Content-Type": "application/json", **headers})
                self.assertEqual(status, 400, data)
                self.assertIn(field + " is given twice", data.decode())
        # The same names in different objects, or one object after another, are fine.
        status, _, data = self.server.request(
            "POST", "/v1/translate", b'{"texts": ["ok"], "glossary": [{"source": "file", '
                                     b'"target": "Datei"}, {"source": "a", "target": "b"}]}')
        self.assertEqual(status, 200, data)

    def test_a_nul_character_is_400_naming_its_field(self):
        for body, message in [({"texts": ["ok", "Save\u0000 the file."]},
                               "texts[1] contains U+0000 (NUL)"),
                              ({"texts": ["ok"], "glossary": [{"source": "fi\u0000le",
                                                               "target": "Datei"}]},
                               "glossary[0]: the source term contains U+0000 (NUL)")]:
            with self.subTest(body=body):
                self.assert_error(self.server.translate(body), 400, "INVALID_ARGUMENT", message)

    def test_unknown_model_is_404(self):
        self.assert_error(self.server.translate({"model": "xx-yy", "texts": ["Cancel"]}), 404,
                          "NOT_FOUND", "xx-yy")

    def test_a_body_over_the_limit_is_413(self):
        big = {"model": "en-de", "texts": ["Save the file. " * 400]}  # ~6 KB > 4096
        self.assert_error(self.server.translate(big), 413, "RESOURCE_EXHAUSTED",
                          "over the limit of 4096 bytes")
        # A huge declared body is refused at once, unread (no client waits to send 10 GB).
        with socket.create_connection(("127.0.0.1", self.server.http_port), timeout=5) as s:
            s.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n")
            self.assertTrue(s.recv(4096).startswith(b"HTTP/1.1 413 "))
        # Also without a Content-Length (chunked): the body is cut off as it arrives.
        status, _, data = self.server.request(
            "POST", "/v1/translate", body=iter([json.dumps(big).encode()]))
        self.assertEqual(status, 413, data)

    def test_compressed_bodies_are_inflated_within_the_limit(self):
        body = json.dumps({"model": "en-de", "texts": TEXTS}).encode()
        _, _, plain = self.server.translate(body)
        # gzip (also as several members) and deflate (zlib's format) read as the plain body;
        # before, "the body is not valid JSON".
        for encoding, data in (("gzip", gzip.compress(body)),
                               ("x-gzip", gzip.compress(body[:10]) + gzip.compress(body[10:])),
                               ("deflate", zlib.compress(body)), ("GZIP, identity",
                                                                  gzip.compress(body))):
            status, _, answer = self.server.translate(
                data, {"Content-Type": "application/json", "Content-Encoding": encoding})
            self.assertEqual((status, answer), (200, plain), encoding)
        # Past the limit once inflated: 413, as a plain body over it (a "zip bomb" stops there).
        bomb = gzip.compress(json.dumps({"model": "en-de", "texts": [" " * 100000]}).encode())
        self.assertLess(len(bomb), 4096)
        self.assert_error(self.server.translate(bomb, {"Content-Encoding": "gzip"}), 413,
                          "RESOURCE_EXHAUSTED", "over the limit of 4096 bytes")
        # An encoding rpt cannot read is 415, a broken stream 400, each saying so.
        for encoding, data, want in (("br", body, 415), ("gzip", body, 400),
                                     ("gzip", gzip.compress(body)[:-12], 400)):
            status, headers, answer = self.server.translate(
                data, {"Content-Type": "application/json", "Content-Encoding": encoding})
            self.assertEqual(status, want, answer)
            self.assertIn("Content-Encoding" if want == 400 else "not supported",
                          answer["error"] + " / " + answer["message"])
        # The LibreTranslate and DeepL paths read the same bodies.
        status, _, data = self.server.request(
            "POST", "/translate", gzip.compress(b"q=Open%20the%20file.&source=en&target=de"),
            {"Content-Type": "application/x-www-form-urlencoded", "Content-Encoding": "gzip"})
        self.assertEqual(status, 200, data)
        self.assertTrue(json.loads(data)["translatedText"], data)

    def test_deadlines_are_504(self):
        self.assert_error(self.server.translate(dict(long_work(2, 1900), timeout=0.3)), 504,
                          "DEADLINE_EXCEEDED", "")
        self.assert_error(self.server.translate(long_work(2, 1900),
                                                headers={"X-Request-Timeout": "0.3"}),
                          504, "DEADLINE_EXCEEDED", "")
        self.assert_error(self.server.translate(long_work(1, 10),
                                                headers={"X-Request-Timeout": "later"}),
                          400, "INVALID_ARGUMENT", "X-Request-Timeout")

    def test_wrong_method_and_path(self):
        status, headers, data = self.server.request("GET", "/v1/translate")
        self.assertEqual((status, headers.get("Allow")), (405, "POST"))
        self.assertEqual(json.loads(data)["error"]["code"], "UNIMPLEMENTED")
        status, _, data = self.server.request("GET", "/v3/nothing")
        self.assertEqual(status, 404)
        self.assertTrue(data.startswith(b"not found"))
        # /v2/ is DeepL's API: its 404 in DeepL's shape.
        status, _, data = self.server.request("GET", "/v2/nothing")
        self.assertEqual(status, 404)
        self.assertIn("Not found", json.loads(data)["message"])

    def test_http_calls_are_counted_with_their_protocol(self):
        ok = 'rpt_requests_total{code="OK",method="Translate",model="en-de",protocol="http"}'
        before = self.server.metric(ok) or 0
        status, _, _ = self.server.translate({"model": "en-de", "texts": ["Cancel"]},
                                             headers={"X-Request-Id": "http-call-7"})
        self.assertEqual(status, 200)
        self.assertEqual(self.server.metric(ok), before + 1)
        self.assertIn("request id=http-call-7 protocol=http method=Translate", self.server.log())
        # A refused call is counted too (whatever its model label: it routed to none).
        self.server.translate({"model": "nope", "texts": ["Cancel"]})
        _, _, exposition = self.server.request("GET", "/metrics")
        refused = [line for line in exposition.decode().splitlines()
                   if line.startswith('rpt_requests_total{code="NOT_FOUND",method="Translate",')
                   and 'protocol="http"' in line]
        self.assertEqual(len(refused), 1, exposition)
        self.assertGreaterEqual(float(refused[0].split(" ")[1]), 1)


class HttpOverloadTest(unittest.TestCase):
    """A full admission queue is 429 with Retry-After."""

    def test_a_full_queue_is_429_with_retry_after(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000", "--max-active-sentences", "1",
                                "--max-queued-sentences", "3"])
        try:
            def occupy():
                try:
                    server.translate(long_work(3, 1900), timeout=120)
                except OSError:
                    pass  # the server is killed below, once the test has its answer

            busy = threading.Thread(target=occupy)
            busy.start()
            self.assertTrue(server.wait_for_metric('rpt_active_rows{model="en-de"}',
                                                   lambda v: v > 0))
            status, headers, body = server.translate(long_work(2, 5))
            self.assertEqual(status, 429, body)
            self.assertEqual(headers.get("Retry-After"), "1")
            self.assertEqual(body["error"]["code"], "RESOURCE_EXHAUSTED")
            server.signal(signal.SIGKILL)
            busy.join()
        finally:
            server.close()


class HttpHangupTest(unittest.TestCase):
    """A client that closes its connection cancels its translation, queued or running, as a
    cancelled gRPC call does: counted CANCELLED (499) and its sentences dropped."""

    def open_call(self, server, body):
        """Sends POST /v1/translate on a raw socket and leaves it waiting for the answer."""
        data = json.dumps(body).encode()
        connection = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
        connection.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: test\r\n"
                           b"Content-Type: application/json\r\n"
                           + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        return connection

    def test_a_client_that_hangs_up_cancels_its_call(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000", "--max-active-sentences", "1"])
        cancelled = ('rpt_requests_total{code="CANCELLED",method="Translate",model="en-de",'
                     'protocol="http"}')
        active = 'rpt_active_sentences{model="en-de"}'
        queued = 'rpt_queue_depth_sentences{model="en-de"}'
        try:
            # Thousands of decoding steps each: neither can finish on its own during the test.
            running = self.open_call(server, long_work(1, 1900))
            self.assertTrue(server.wait_for_metric(active, lambda v: v == 1))
            waiting = self.open_call(server, long_work(1, 1900))
            self.assertTrue(server.wait_for_metric(queued, lambda v: v == 1))

            waiting.close()  # queued: leaves the queue, the running call goes on
            self.assertTrue(server.wait_for_metric(cancelled, lambda v: v == 1), server.log())
            self.assertEqual(server.metric(queued), 0)
            self.assertEqual(server.metric(active), 1)

            running.close()  # running: its rows are freed
            self.assertTrue(server.wait_for_metric(cancelled, lambda v: v == 2), server.log())
            self.assertTrue(server.wait_for_metric(active, lambda v: v == 0))
            self.assertEqual(server.log().count(
                "code=CANCELLED message=the client closed the connection before the answer "
                "(HTTP 499)"), 2)

            # The server goes on serving both protocols, and the HTTP port takes new calls.
            status, _, body = server.translate({"model": "en-de", "texts": ["Cancel"]})
            self.assertEqual(status, 200, body)
            grpc = GrpcTranslator(server.grpc_port)
            try:
                self.assertEqual(len(grpc.translate("en-de", ["Cancel"]).translations), 1)
            finally:
                grpc.close()
            self.assertEqual(server.request("GET", "/healthz")[0], 200)
        finally:
            server.close()

    def test_a_client_that_waits_gets_its_answer(self):
        """The watch for hangups does not cut a patient client short."""
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000"])
        try:
            connection = self.open_call(server, long_work(2, 200))
            response = http.client.HTTPResponse(connection)
            response.begin()
            body = json.loads(response.read())
            connection.close()
            self.assertEqual(response.status, 200, body)
            self.assertEqual([t["target_tokens"] for t in body["translations"]], [200, 200])
        finally:
            server.close()


class HttpDeepBodyTest(unittest.TestCase):
    """Bodies nested far past any request's shape (100,000 levels once killed the server with
    SIGSEGV, losing every call in flight) are 400 at once, and the server keeps serving."""

    def test_deep_bodies_are_400_while_a_call_completes(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000"])
        try:
            answers = []
            running = threading.Thread(
                target=lambda: answers.append(server.translate(long_work(2, 300), timeout=120)))
            running.start()
            levels = 100_000
            prefix = '{"model": "en-de", "texts": ["Cancel"], "options": '
            bodies = {
                "options": prefix + '{"a": ' * levels + "1" + "}" * levels + "}",
                "texts": '{"model": "en-de", "texts": ' + "[" * levels + "]" * levels + "}",
                "unknown field": '{"x": ' + "[" * levels + "]" * levels + "}",
                "33 levels": prefix + '{"a": ' * 32 + "1" + "}" * 32 + "}",
            }
            for what, body in bodies.items():
                with self.subTest(what=what):
                    started = time.monotonic()
                    status, _, data = server.request("POST", "/v1/translate", body.encode())
                    self.assertLess(time.monotonic() - started, 1.0)
                    self.assertEqual(status, 400, data)
                    error = json.loads(data)["error"]
                    self.assertEqual(error["code"], "INVALID_ARGUMENT")
                    self.assertIn("more than 32 levels deep", error["message"])
            # 32 levels are parsed (and refused by protobuf for the unknown field, not for depth).
            status, _, data = server.request(
                "POST", "/v1/translate", (prefix + '{"a": ' * 31 + "1" + "}" * 31 + "}").encode())
            self.assertEqual(status, 400, data)
            self.assertNotIn("levels deep", json.loads(data)["error"]["message"])
            running.join()
            self.assertEqual(answers[0][0], 200, answers[0][2])
            status, _, body = server.translate({"model": "en-de", "texts": ["Cancel"]})
            self.assertEqual(status, 200, body)
            self.assertIsNone(server.process.poll())
        finally:
            server.close()


class HttpDrainTest(unittest.TestCase):
    """SIGTERM: every HTTP call in flight is answered, new ones get 503, /readyz turns 503."""

    def test_a_drain_answers_every_http_call_in_flight(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000", "--grace-period", "60"])
        try:
            results = []
            lock = threading.Lock()

            def call():
                answer = server.translate(long_work(2, 600), timeout=120)
                with lock:
                    results.append(answer)

            calls = [threading.Thread(target=call) for _ in range(3)]
            for t in calls:
                t.start()
            # All three calls decoding (2 texts x beam 4 rows each) before the signal: with 16
            # rows (two calls) the third could still be on its way, and a connection the server
            # has not accepted when it drains is closed unanswered (seen once under CI load).
            self.assertTrue(server.wait_for_metric('rpt_active_rows{model="en-de"}',
                                                   lambda v: v >= 24))
            server.signal(signal.SIGTERM)
            give_up = 0
            while server.request("GET", "/readyz")[0] != 503 and give_up < 500:
                give_up += 1
            self.assertEqual(server.request("GET", "/readyz")[0], 503)
            self.assertEqual(server.request("GET", "/healthz")[0], 200)
            status, _, body = server.translate({"model": "en-de", "texts": ["Cancel"]})
            self.assertEqual((status, body["error"]["code"]), (503, "UNAVAILABLE"))
            # Counted under the model it named (never a model="_none" series).
            self.assertEqual(server.metric('rpt_requests_total{code="UNAVAILABLE",'
                                           'method="Translate",model="en-de",protocol="http"}'), 1)
            self.assertNotIn(b'model="_none"', server.request("GET", "/metrics")[2])
            for t in calls:
                t.join()
            self.assertEqual(len(results), 3)
            for status, _, body in results:
                self.assertEqual(status, 200, body)
                self.assertEqual(len(body["translations"]), 2)
                self.assertEqual(body["translations"][0]["target_tokens"], 600)
            self.assertEqual(server.wait_exit(30), 0, server.log())
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
