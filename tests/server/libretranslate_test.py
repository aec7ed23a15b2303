"""LibreTranslate's API on the real rpt-server (server/libretranslate_api.h), spoken to by the real
client (libretranslatepy from PyPI, as tools/setup.sh installs it) and by hand in the shapes
LibreTranslate documents: form and JSON bodies, q as a text or an array, source auto,
alternatives, format html, /languages, /frontend/settings and its errors; and language detection
(source auto among several sources into a target, POST /detect) on a server whose second model
into German is en-de declared as fr-de (tests/server/relabelled_model.py).

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/libretranslate_test.py
"""
import json
import os
import socket
import unittest
import urllib.error
import urllib.parse
import urllib.request

from relabelled_model import RelabelledModel
from rpt_server import REPO, model_arguments, ServerProcess

MODELS = {"en-de": os.path.join(REPO, "models", "en-de"),
          "en-fr": os.path.join(REPO, "models", "en-fr")}


class LibreTranslateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(model_arguments(MODELS) + ["--beam-size", "2"])
        cls.url = f"http://127.0.0.1:{cls.server.http_port}/"

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def native(self, texts, model, **options):
        status, _, body = self.server.translate({"model": model, "texts": texts,
                                                 "options": options})
        self.assertEqual(status, 200, body)
        return [t["hypotheses"] for t in body["translations"]]

    def post(self, fields, as_json):
        data = json.dumps(fields) if as_json else urllib.parse.urlencode(fields, doseq=True)
        headers = {"Content-Type": "application/json" if as_json
                   else "application/x-www-form-urlencoded"}
        request = urllib.request.Request(self.url + "translate", data=data.encode(),
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def test_the_libretranslatepy_client_translates_and_lists_languages(self):
        from libretranslatepy import LibreTranslateAPI
        client = LibreTranslateAPI(self.url)
        text = "Save the file.  Open it again?"
        self.assertEqual(client.translate(text, "en", "de"),
                         self.native([text], "en-de")[0][0]["text"])
        self.assertEqual(client.translate("Quit", "en", "fr"),
                         self.native(["Quit"], "en-fr")[0][0]["text"])
        self.assertEqual(client.languages(),
                         [{"code": "en", "name": "English", "targets": ["de", "fr"]}])
        with self.assertRaises(urllib.error.HTTPError) as refused:
            client.translate("Quit", "en", "es")
        self.assertEqual(refused.exception.code, 400)
        self.assertIn("error", json.loads(refused.exception.read()))

    def test_json_and_form_bodies_in_libretranslates_shapes(self):
        texts = ["Open the file.", "", "Close all windows."]
        want = [h[0]["text"] for h in self.native(texts, "en-fr")]
        for as_json in (True, False):
            with self.subTest(as_json=as_json):
                status, body = self.post({"q": texts, "source": "en", "target": "fr"}, as_json)
                self.assertEqual((status, body), (200, {"translatedText": want}))
                status, body = self.post({"q": texts[0], "source": "en", "target": "fr",
                                          "alternatives": 2}, as_json)
                self.assertEqual(status, 200, body)
                native = self.native([texts[0]], "en-fr", n_best=3, beam_size=3)[0]
                self.assertEqual(body, {"translatedText": native[0]["text"],
                                        "alternatives": [h["text"] for h in native[1:]]})
        # multipart/form-data, as a browser's form sends it.
        parts = b"".join(b'--xyz\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
                         % (name, value) for name, value in
                         [(b"q", texts[0].encode()), (b"source", b"en"), (b"target", b"fr")])
        request = urllib.request.Request(
            self.url + "translate", data=parts + b"--xyz--\r\n",
            headers={"Content-Type": "multipart/form-data; boundary=xyz"})
        with urllib.request.urlopen(request, timeout=60) as response:
            self.assertEqual(json.loads(response.read()), {"translatedText": want[0]})

    def test_source_auto_picks_the_one_model_into_the_target(self):
        status, body = self.post({"q": "Open the file.", "source": "auto", "target": "de"},
                                 True)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["detectedLanguage"], {"confidence": 100.0, "language": "en"})
        self.assertEqual(body["translatedText"],
                         self.native(["Open the file."], "en-de")[0][0]["text"])

    def test_html_keeps_its_markup(self):
        status, body = self.post({"q": "<p>Open <b>the file</b>.</p>", "source": "en",
                                  "target": "de", "format": "html"}, True)
        self.assertEqual(status, 200, body)
        out = body["translatedText"]
        self.assertTrue(out.startswith("<p>") and out.endswith("</p>"), out)
        self.assertIn("<b>", out)

    def test_errors_are_libretranslates(self):
        for fields, message in (({"source": "en", "target": "de"}, "missing q"),
                                ({"q": "x", "target": "de"}, "missing source"),
                                ({"q": "x", "source": "en"}, "missing target"),
                                ({"q": "x", "source": "en", "target": "de", "format": "pdf"},
                                 "format"),
                                ({"q": "x", "source": "en", "target": "xx"}, "")):
            for as_json in (True, False):
                with self.subTest(fields=fields, as_json=as_json):
                    status, body = self.post(fields, as_json)
                    self.assertEqual(status, 400, body)
                    self.assertEqual(set(body), {"error"})
                    self.assertIn(message, body["error"])
        status, _, data = self.server.request("POST", "/translate", "{not json",
                                              {"Content-Type": "application/json"})
        self.assertEqual(status, 400)
        self.assertIn("error", json.loads(data))
        # Every status in LibreTranslate's shape: a wrong method (with Allow), a body too large.
        for method, path, allowed in (("GET", "/translate", "POST"), ("GET", "/detect", "POST"),
                                      ("POST", "/languages", "GET"),
                                      ("DELETE", "/frontend/settings", "GET")):
            with self.subTest(method=method, path=path):
                status, headers, data = self.server.request(method, path)
                self.assertEqual((status, headers.get("Allow")), (405, allowed))
                self.assertEqual(set(json.loads(data)), {"error"})
        for path in ("/translate", "/detect"):
            with self.subTest(path=path):
                with socket.create_connection(("127.0.0.1", self.server.http_port),
                                              timeout=10) as s:
                    s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                              b"application/json\r\nContent-Length: 10000000000\r\n"
                              b"Connection: close\r\n\r\n" % path.encode())
                    answer = b""
                    while chunk := s.recv(4096):
                        answer += chunk
                head, _, body = answer.partition(b"\r\n\r\n")
                self.assertTrue(head.startswith(b"HTTP/1.1 413 "), head)
                self.assertEqual(set(json.loads(body)), {"error"})

    # LibreTranslate refuses a q that Python reads as false (`if not q`: app.py) before anything
    # else; rpt answered q="" with 200 and an empty translation.
    def test_an_empty_q_is_missing_as_libretranslate_says(self):
        for q in ("", [], None, False, 0, {}):
            for as_json in (True, False):
                if not as_json and not isinstance(q, str):
                    continue  # a form has only texts
                with self.subTest(q=q, as_json=as_json):
                    status, body = self.post({"q": q, "source": "en", "target": "de"}, as_json)
                    self.assertEqual((status, body),
                                     (400, {"error": "Invalid request: missing q parameter"}))
        status, body = self.post({"q": "", "source": "auto", "target": "de"}, True)
        self.assertEqual((status, body), (400, {"error": "Invalid request: missing q parameter"}))
        # An array that holds texts is no missing q, even when they are empty: each comes back.
        want = self.native(["Open the file."], "en-de")[0][0]["text"]
        for q, translated in (([""], [""]), (["", "Open the file."], ["", want])):
            with self.subTest(q=q):
                status, body = self.post({"q": q, "source": "en", "target": "de"}, True)
                self.assertEqual((status, body), (200, {"translatedText": translated}))
        for q in (True, 3, {"text": "x"}):
            with self.subTest(q=q):
                status, body = self.post({"q": q, "source": "en", "target": "de"}, True)
                self.assertEqual(status, 400, body)
                self.assertIn("q must be a string or an array", body["error"])
        from libretranslatepy import LibreTranslateAPI
        with self.assertRaises(urllib.error.HTTPError) as refused:
            LibreTranslateAPI(self.url).translate("", "en", "de")
        self.assertEqual(refused.exception.code, 400)
        self.assertEqual(json.loads(refused.exception.read()),
                         {"error": "Invalid request: missing q parameter"})

    def test_language_codes_are_read_case_aside_and_a_region_falls_back(self):
        want = self.native(["Open the file."], "en-de")[0][0]["text"]
        for source, target in (("EN", "DE"), ("en-US", "de-DE"), ("auto", "De")):
            with self.subTest(source=source, target=target):
                status, body = self.post({"q": "Open the file.", "source": source,
                                          "target": target}, True)
                self.assertEqual(status, 200, body)
                self.assertEqual(body["translatedText"], want)

    def test_frontend_settings(self):
        status, _, data = self.server.request("GET", "/frontend/settings")
        self.assertEqual(status, 200)
        settings = json.loads(data)
        self.assertFalse(settings["keyRequired"])
        self.assertEqual(settings["language"]["source"], {"code": "en", "name": "English"})


ENGLISH = "Save the file before you close the window."
FRENCH = "Enregistrer le fichier avant de fermer la fenêtre."


class LanguageDetectionTest(unittest.TestCase):
    """en-de, fr-de (en-de's weights: what it translates is irrelevant, where it goes is tested)
    and en-fr: two sources into German, one into French; served sources en, fr."""

    @classmethod
    def setUpClass(cls):
        cls.fr_de = RelabelledModel(MODELS["en-de"], "fr", "de")
        models = {"en-de": MODELS["en-de"], "fr-de": cls.fr_de.directory,
                  "en-fr": MODELS["en-fr"]}
        cls.server = ServerProcess(model_arguments(models) + ["--beam-size", "2"])
        cls.url = f"http://127.0.0.1:{cls.server.http_port}/"

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        cls.fr_de.close()

    native = LibreTranslateTest.native

    def post(self, path, fields, as_json):
        data = json.dumps(fields) if as_json else urllib.parse.urlencode(fields, doseq=True)
        headers = {"Content-Type": "application/json" if as_json
                   else "application/x-www-form-urlencoded"}
        request = urllib.request.Request(self.url + path, data=data.encode(), headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def assert_detected(self, answer, language, at_least=90.0):
        self.assertIsInstance(answer, dict)
        self.assertEqual(set(answer), {"confidence", "language"})
        self.assertEqual(answer["language"], language, answer)
        self.assertGreaterEqual(answer["confidence"], at_least, answer)
        self.assertLessEqual(answer["confidence"], 100.0, answer)

    def test_the_libretranslatepy_client_detects_among_the_served_sources(self):
        from libretranslatepy import LibreTranslateAPI
        client = LibreTranslateAPI(self.url)
        for text, language in ((ENGLISH, "en"), (FRENCH, "fr")):
            with self.subTest(language=language):
                answer = client.detect(text)
                self.assertIsInstance(answer, list)
                self.assert_detected(answer[0], language)
                self.assertTrue(all(a["language"] in ("en", "fr") for a in answer), answer)
        # Nothing to detect: the first served model's source, with no confidence.
        self.assertEqual(client.detect("12345 !!!"), [{"confidence": 0.0, "language": "en"}])

    def test_source_auto_detects_among_the_sources_into_the_target(self):
        from libretranslatepy import LibreTranslateAPI
        client = LibreTranslateAPI(self.url)
        self.assertEqual(client.translate(FRENCH, "auto", "de"),
                         self.native([FRENCH], "fr-de")[0][0]["text"])
        for text, language, model in ((ENGLISH, "en", "en-de"), (FRENCH, "fr", "fr-de")):
            for as_json in (True, False):
                with self.subTest(language=language, as_json=as_json):
                    status, body = self.post("translate", {"q": text, "source": "auto",
                                                           "target": "de"}, as_json)
                    self.assertEqual(status, 200, body)
                    self.assert_detected(body["detectedLanguage"], language)
                    self.assertEqual(body["translatedText"],
                                     self.native([text], model)[0][0]["text"])
        # One source language for the call, detected on all its texts (short ones included).
        texts = ["Quitter", "Enregistrer le fichier sous un autre nom.", "Fermer la fenêtre"]
        status, body = self.post("translate", {"q": texts, "source": "auto", "target": "de"},
                                 True)
        self.assertEqual(status, 200, body)
        self.assertEqual(len(body["detectedLanguage"]), 3)
        for detected in body["detectedLanguage"]:
            self.assert_detected(detected, "fr")
        self.assertEqual(body["translatedText"],
                         [h[0]["text"] for h in self.native(texts, "fr-de")])
        # Into French only English is served: it, without detecting (even on French text).
        status, body = self.post("translate", {"q": FRENCH, "source": "auto", "target": "fr"},
                                 True)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["detectedLanguage"], {"confidence": 100.0, "language": "en"})
        status, body = self.post("translate", {"q": FRENCH, "source": "auto", "target": "es"},
                                 True)
        self.assertEqual(status, 400, body)
        self.assertIn("es is not supported as a target language", body["error"])

    def test_detect_answers_in_libretranslates_shapes(self):
        for as_json in (True, False):
            with self.subTest(as_json=as_json):
                status, body = self.post("detect", {"q": FRENCH}, as_json)
                self.assertEqual(status, 200, body)
                self.assert_detected(body[0], "fr")
                # Several texts: one list, for all of them (as LibreTranslate answers a batch).
                status, body = self.post("detect", {"q": [ENGLISH, "Open the file", "Quit"]},
                                         as_json)
                self.assertEqual(status, 200, body)
                self.assertIsInstance(body, list)
                self.assert_detected(body[0], "en")
                for fields in ({}, {"q": ""}, {"q": []}):
                    status, body = self.post("detect", fields, as_json)
                    self.assertEqual((status, list(body)), (400, ["error"]), fields)
                    self.assertIn("missing q", body["error"])
        status, body = self.post("detect", {"q": 5}, True)
        self.assertEqual((status, list(body)), (400, ["error"]))
        status, _, _ = self.server.request("GET", "/detect")
        self.assertEqual(status, 405)
        # A long text is detected on its beginning: a megabyte answers at once.
        status, body = self.post("detect", {"q": (FRENCH + " ") * 20000}, True)
        self.assertEqual(status, 200)
        self.assert_detected(body[0], "fr")


if __name__ == "__main__":
    unittest.main(verbosity=2)
