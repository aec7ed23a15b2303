"""API keys and quotas on the real rpt-server (--api-keys, server/api_keys.h), through every
front end: gRPC (authorization metadata), rpt's JSON (Authorization: Bearer), LibreTranslate's
api_key (libretranslatepy) and DeepL's DeepL-Auth-Key (DeepL's own client): no key or an
unknown one is refused in each API's shape, a listed key translates exactly as without keys,
and a key's monthly quota refuses the call that would pass it (DeepL: 456, its usage shows it).

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/api_keys_server_test.py
"""
import json
import os
import shutil
import tempfile
import unittest
import urllib.error
import urllib.request

from rpt_server import REPO, GrpcTranslator, ServerProcess

MODEL = os.path.join(REPO, "models", "en-de")
OPEN = "open-0123456789abcdef"      # no quota
SMALL = "small-0123456789abcdef"    # 30 characters a month
TEXT = "Save the file."             # 14 characters


class ApiKeysServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="rpt_keys_test_")
        keys = os.path.join(cls.directory, "keys.tsv")
        with open(keys, "w") as f:
            f.write(f"# tenants\n{OPEN}\tOpen team\n{SMALL}\tSmall team\t30\n")
        cls.server = ServerProcess(["--model", f"en-de={MODEL}", "--api-keys", keys])
        cls.free = ServerProcess(["--model", f"en-de={MODEL}"])  # the same model, no keys
        cls.grpc = GrpcTranslator(cls.server.grpc_port)
        status, _, body = cls.free.translate({"texts": [TEXT]})
        cls.want = body["translations"][0]["hypotheses"][0]["text"]

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()
        cls.free.close()
        shutil.rmtree(cls.directory, ignore_errors=True)

    def test_grpc_and_json_need_a_listed_key(self):
        grpc = self.grpc.grpc
        for metadata in ((), (("authorization", "Bearer nope-0123456789abcdef"),)):
            with self.assertRaises(grpc.RpcError) as raised:
                self.grpc._translate(self.grpc.request("en-de", [TEXT]), metadata=metadata)
            self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        reply = self.grpc._translate(self.grpc.request("en-de", [TEXT]),
                                     metadata=(("authorization", f"Bearer {OPEN}"),))
        self.assertEqual(reply.translations[0].hypotheses[0].text, self.want)
        status, _, body = self.server.translate({"texts": [TEXT]})
        self.assertEqual((status, body["error"]["code"]), (401, "UNAUTHENTICATED"))
        status, _, body = self.server.translate({"texts": [TEXT]},
                                                {"Authorization": f"Bearer {OPEN}"})
        self.assertEqual((status, body["translations"][0]["hypotheses"][0]["text"]),
                         (200, self.want))

    def test_libretranslate_takes_api_key(self):
        from libretranslatepy import LibreTranslateAPI
        url = f"http://127.0.0.1:{self.server.http_port}/"
        self.assertEqual(LibreTranslateAPI(url, api_key=OPEN).translate(TEXT, "en", "de"),
                         self.want)
        request = urllib.request.Request(url + "translate", data=json.dumps(
            {"q": TEXT, "source": "en", "target": "de"}).encode(),
            headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=60)
        self.assertEqual(raised.exception.code, 403)
        self.assertIn("API key", json.loads(raised.exception.read())["error"])
        with urllib.request.urlopen(url + "frontend/settings", timeout=60) as response:
            self.assertTrue(json.loads(response.read())["keyRequired"])

    def test_a_quota_refuses_the_call_that_would_pass_it(self):
        import deepl
        translator = deepl.Translator(SMALL, server_url=f"http://127.0.0.1:{self.server.http_port}")
        self.assertEqual(translator.translate_text(TEXT, target_lang="DE").text, self.want)
        self.assertEqual(translator.translate_text(TEXT, target_lang="DE").text, self.want)
        usage = translator.get_usage().character
        self.assertEqual((usage.count, usage.limit), (28, 30))
        with self.assertRaises(deepl.QuotaExceededException):
            translator.translate_text(TEXT, target_lang="DE")
        self.assertEqual(translator.get_usage().character.count, 28)  # nothing charged
        status, _, body = self.server.translate({"texts": ["Quit"]},
                                                {"Authorization": f"Bearer {SMALL}"})
        self.assertEqual((status, body["error"]["code"]), (429, "RESOURCE_EXHAUSTED"))
        self.assertIn("quota of 30 characters", body["error"]["message"])
        with self.assertRaises(deepl.AuthorizationException):
            deepl.Translator("unknown-0123456789abcdef",
                             server_url=f"http://127.0.0.1:{self.server.http_port}").get_usage()
        # Another key is not touched by it.
        self.assertEqual(deepl.Translator(
            OPEN, server_url=f"http://127.0.0.1:{self.server.http_port}").translate_text(
                "Quit", target_lang="DE").text,
            self.free.translate({"texts": ["Quit"]})[2]["translations"][0]["hypotheses"][0]["text"])


if __name__ == "__main__":
    unittest.main()
