"""LibreTranslate's API on the real rpt-server (server/libretranslate_api.h), spoken to by the real
client (libretranslatepy from PyPI, as tools/setup.sh installs it) and by hand in the shapes
LibreTranslate documents: form and JSON bodies, q as a text or an array, source auto,
alternatives, format html, /languages, /frontend/settings and its errors.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/libretranslate_test.py
"""
import json
import os
import unittest
import urllib.error
import urllib.parse
import urllib.request

from rpt_server import REPO, ServerProcess

MODELS = {"en-de": os.path.join(REPO, "models", "en-de"),
          "en-fr": os.path.join(REPO, "models", "en-fr")}


class LibreTranslateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        args = []
        for name, path in MODELS.items():
            args += ["--model", f"{name}={path}"]
        cls.server = ServerProcess(args + ["--beam-size", "2"])
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
        status, _, _ = self.server.request("GET", "/translate")
        self.assertEqual(status, 405)

    def test_frontend_settings(self):
        status, _, data = self.server.request("GET", "/frontend/settings")
        self.assertEqual(status, 200)
        settings = json.loads(data)
        self.assertFalse(settings["keyRequired"])
        self.assertEqual(settings["language"]["source"], {"code": "en", "name": "English"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
