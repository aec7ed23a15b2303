"""The translation APIs on a port of their own (--http-listen) on the real rpt-server: the
public port answers rpt's, LibreTranslate's and DeepL's APIs and not /metrics; the admin port
answers the probes and /metrics and not the APIs; HTTPS with --tls-cert/--tls-key (a throwaway
certificate made by openssl); CORS for --cors-origins, preflight included.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/http_listen_test.py
"""
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import unittest

from rpt_server import FIXTURE_MODEL, ServerProcess
from rpt_server import http_call as call

ORIGIN = "https://app.example"


TRANSLATE = json.dumps({"texts": ["Save the file."]})


class PublicPortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--beam-size", "2",
                                    "--http-listen", "127.0.0.1:0",
                                    "--cors-origins", f"{ORIGIN},http://localhost:8080"])

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_the_apis_and_the_admin_surface_are_apart(self):
        public, admin = self.server.public_port, self.server.http_port
        self.assertIsNotNone(public)
        status, _, body = call(public, "POST", "/v1/translate", TRANSLATE)
        self.assertEqual(status, 200, body)
        native = json.loads(body)["translations"][0]["hypotheses"][0]["text"]
        status, _, body = call(public, "POST", "/translate",
                               json.dumps({"q": "Save the file.", "source": "en", "target": "de"}),
                               {"Content-Type": "application/json"})
        self.assertEqual((status, json.loads(body)["translatedText"]), (200, native))
        status, _, body = call(public, "POST", "/v2/translate", "text=Save+the+file.&target_lang=DE",
                               {"Authorization": "DeepL-Auth-Key k",
                                "Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual((status, json.loads(body)["translations"][0]["text"]), (200, native))
        for path in ("/metrics", "/healthz", "/readyz"):
            self.assertEqual(call(public, "GET", path)[0], 404, path)
            self.assertEqual(call(admin, "GET", path)[0], 200, path)
        status, _, body = call(admin, "POST", "/v1/translate", TRANSLATE)
        self.assertEqual(status, 404)
        self.assertIn(b"--http-listen", body)

    def test_cors_for_listed_origins_only(self):
        public = self.server.public_port
        preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "content-type, authorization"}
        status, headers, _ = call(public, "OPTIONS", "/v2/translate", None, preflight)
        self.assertEqual(status, 204)
        self.assertEqual(headers["Access-Control-Allow-Origin"], ORIGIN)
        self.assertIn("POST", headers["Access-Control-Allow-Methods"])
        self.assertIn("Authorization", headers["Access-Control-Allow-Headers"])
        self.assertIn("Content-Type", headers["Access-Control-Allow-Headers"])
        self.assertEqual(headers["Vary"], "Origin")
        status, headers, body = call(public, "POST", "/v1/translate", TRANSLATE,
                                     {"Origin": ORIGIN})
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Access-Control-Allow-Origin"], ORIGIN)
        # Errors carry it too, or the page could not read them.
        status, headers, _ = call(public, "POST", "/v1/translate", "{", {"Origin": ORIGIN})
        self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (400, ORIGIN))
        status, headers, _ = call(public, "POST", "/v1/translate", TRANSLATE,
                                  {"Origin": "https://evil.example"})
        self.assertEqual(status, 200)
        self.assertNotIn("Access-Control-Allow-Origin", headers)
        status, headers, _ = call(public, "OPTIONS", "/v1/translate", None,
                                  {**preflight, "Origin": "https://evil.example"})
        self.assertNotIn("Access-Control-Allow-Origin", headers)


class HttpsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="rpt_https_test_")
        cls.cert = os.path.join(cls.directory, "cert.pem")
        key = os.path.join(cls.directory, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cls.cert], check=True, capture_output=True)
        cls.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--beam-size", "2",
                                    "--http-listen", "127.0.0.1:0", "--tls-cert", cls.cert,
                                    "--tls-key", key, "--cors-origins", "*"])

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        shutil.rmtree(cls.directory, ignore_errors=True)

    def test_the_public_port_speaks_https(self):
        context = ssl.create_default_context(cafile=self.cert)
        status, headers, body = call(self.server.public_port, "POST", "/v1/translate", TRANSLATE,
                                     {"Origin": "https://anywhere.example"}, context)
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Access-Control-Allow-Origin"], "*")
        with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            call(self.server.public_port, "GET", "/v1/models")  # plain HTTP is refused
        import deepl
        translator = deepl.Translator(
            "k", server_url=f"https://127.0.0.1:{self.server.public_port}",
            verify_ssl=self.cert)
        self.assertEqual(translator.translate_text("Save the file.", target_lang="DE").text,
                         json.loads(body)["translations"][0]["hypotheses"][0]["text"])


if __name__ == "__main__":
    unittest.main()
