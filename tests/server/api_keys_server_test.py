"""API keys as tenants on the real rpt-server (--api-keys, server/api_keys.h), through every
front end: gRPC (authorization metadata), rpt's JSON (Authorization: Bearer), LibreTranslate's
api_key (libretranslatepy) and DeepL's DeepL-Auth-Key (DeepL's own client): no key or an
unknown one is refused in each API's shape (UNAUTHENTICATED, 401), a model the tenant may not use
is PERMISSION_DENIED (403), an empty token bucket RESOURCE_EXHAUSTED (429) with the seconds to wait
(HTTP Retry-After, gRPC trailing metadata retry-after), a listed key translates exactly as without
keys, and a tenant's monthly quota refuses the call that would pass it (DeepL: 456, its usage
shows it). SIGHUP reloads the file: a revoked key is refused, a new one admitted, the month's count
carried over; a bad file keeps the keys served. The raw keys never reach the log.

    RPT_SERVER_BINARY=build/server/rpt-server RPT_CLIENT_BINARY=build/client/rpt-client \\
        python3 tests/server/api_keys_server_test.py
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from relabelled_model import RelabelledModel
from rpt_server import FIXTURE_MODEL, REPO, GrpcTranslator, ServerProcess, server_binary

MODEL = os.path.join(REPO, "models", "en-de")
OPEN = "open-0123456789abcdef"          # every model, no limit
SMALL = "small-0123456789abcdef"        # 30 characters a month
SHOP = "shop-0123456789abcdef"          # en-de only
SHOP_2 = "shop-2-0123456789abcdef"      # its second key
GRPC_SLOW = "grpc-slow-0123456789abcdef"  # one request per 20 s
HTTP_SLOW = "http-slow-0123456789abcdef"  # one request per 20 s
UNKNOWN = "nope-0123456789abcdef"
TEXT = "Save the file."                 # 14 characters

KEYS = f"""# tenants of the test
tenants:
  - name: open
    keys: [{OPEN}]
  - name: small
    keys: ["{SMALL}"]
    characters_per_month: 30
  - name: shop
    keys: [{SHOP}, {SHOP_2}]
    models: [en-de]
    characters_per_month: 1000
  - name: grpc-slow
    keys: [{GRPC_SLOW}]
    requests_per_second: 0.05
    burst_seconds: 20
  - name: http-slow
    keys: [{HTTP_SLOW}]
    requests_per_second: 0.05
    burst_seconds: 20
    characters_per_minute: 6000
    priority: 2
"""
RAW_KEYS = (OPEN, SMALL, SHOP, SHOP_2, GRPC_SLOW, HTTP_SLOW, UNKNOWN)


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)  # a reload never reads half a file


class KeyedServerTest(unittest.TestCase):
    def assert_no_raw_key_in_log(self, server, keys=RAW_KEYS):
        log = server.log()
        for key in keys:
            self.assertNotIn(key, log)
        # Keys show as their digest's label.
        self.assertIn("key sha256:", log)


class ApiKeysServerTest(KeyedServerTest):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="rpt_keys_test_")
        keys = os.path.join(cls.directory, "keys.yaml")
        write(keys, KEYS)
        # A second model, tenant shop's forbidden one, declared en -> xx so that the language
        # pairs of LibreTranslate and DeepL still route to en-de alone.
        cls.tiny = RelabelledModel(FIXTURE_MODEL, "en", "xx")
        cls.server = ServerProcess(["--model", f"en-de={MODEL}", "--model",
                                    f"tiny={cls.tiny.directory}", "--api-keys", keys])
        cls.free = ServerProcess(["--model", f"en-de={MODEL}"])  # the same model, no keys
        cls.grpc = GrpcTranslator(cls.server.grpc_port)
        status, _, body = cls.free.translate({"texts": [TEXT]})
        cls.want = body["translations"][0]["hypotheses"][0]["text"]

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()
        cls.free.close()
        cls.tiny.close()
        shutil.rmtree(cls.directory, ignore_errors=True)

    def tearDown(self):
        self.assert_no_raw_key_in_log(self.server)

    def grpc_error(self, key, model="en-de", texts=(TEXT,)):
        grpc = self.grpc.grpc
        metadata = (("authorization", f"Bearer {key}"),) if key is not None else ()
        with self.assertRaises(grpc.RpcError) as raised:
            self.grpc._translate(self.grpc.request(model, list(texts)), metadata=metadata)
        return raised.exception

    def deepl_usage(self, key):
        status, _, body = self.server.request(
            "GET", "/v2/usage", headers={"Authorization": f"DeepL-Auth-Key {key}"})
        self.assertEqual(status, 200)
        return json.loads(body)["character_count"]

    def test_grpc_and_json_need_a_listed_key(self):
        for key in (None, UNKNOWN):
            error = self.grpc_error(key)
            self.assertEqual(error.code(), self.grpc.grpc.StatusCode.UNAUTHENTICATED)
        self.assertIn("key sha256:", self.grpc_error(UNKNOWN).details())
        reply = self.grpc._translate(self.grpc.request("en-de", [TEXT]),
                                     metadata=(("authorization", f"Bearer {OPEN}"),))
        self.assertEqual(reply.translations[0].hypotheses[0].text, self.want)
        status, _, body = self.server.translate({"texts": [TEXT]})
        self.assertEqual((status, body["error"]["code"]), (401, "UNAUTHENTICATED"))
        status, _, body = self.server.translate({"model": "en-de", "texts": [TEXT]},
                                                bearer(UNKNOWN))
        self.assertEqual((status, body["error"]["code"]), (401, "UNAUTHENTICATED"))
        status, _, body = self.server.translate({"model": "en-de", "texts": [TEXT]},
                                                bearer(OPEN))
        self.assertEqual((status, body["translations"][0]["hypotheses"][0]["text"]),
                         (200, self.want))
        # The log line names the tenant, not the key.
        self.assertIn("tenant=open", self.server.log())

    def metrics(self, server):
        """{series: value} of the tenant metrics on `server`'s /metrics."""
        status, _, body = server.request("GET", "/metrics")
        self.assertEqual(status, 200)
        text = body.decode() if isinstance(body, bytes) else body
        series = {}
        for line in text.splitlines():
            if line.startswith("rpt_tenant_"):
                name, _, value = line.rpartition(" ")
                series[name] = float(value)
        return series

    def test_metrics_count_each_tenants_calls_and_characters(self):
        before = self.metrics(self.server)
        status, _, _ = self.server.translate({"model": "en-de", "texts": [TEXT, TEXT]},
                                             bearer(OPEN))
        self.assertEqual(status, 200)
        self.grpc_error(UNKNOWN)
        after = self.metrics(self.server)

        def grew(series):
            return after.get(series, 0) - before.get(series, 0)

        self.assertEqual(grew('rpt_tenant_requests_total{code="OK",tenant="open"}'), 1)
        self.assertEqual(grew('rpt_tenant_characters_total{tenant="open"}'), 2 * len(TEXT))
        self.assertEqual(grew('rpt_tenant_requests_total{code="UNAUTHENTICATED",tenant="_none"}'),
                         1)
        # Names from the keys file only, never a key; nothing per tenant without --api-keys.
        self.assertFalse(any(key in name for name in after for key in RAW_KEYS))
        self.assertEqual(self.metrics(self.free), {})

    def test_a_model_the_tenant_may_not_use_is_permission_denied(self):
        before = self.deepl_usage(SHOP)
        error = self.grpc_error(SHOP, model="tiny")
        self.assertEqual(error.code(), self.grpc.grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("tenant shop may not use the model 'tiny'", error.details())
        status, _, body = self.server.translate({"model": "tiny", "texts": [TEXT]}, bearer(SHOP_2))
        self.assertEqual((status, body["error"]["code"]), (403, "PERMISSION_DENIED"))
        # Nothing charged for the refusals; the model it may use translates.
        self.assertEqual(self.deepl_usage(SHOP), before)
        status, _, body = self.server.translate({"model": "en-de", "texts": [TEXT]}, bearer(SHOP))
        self.assertEqual((status, body["translations"][0]["hypotheses"][0]["text"]),
                         (200, self.want))
        self.assertEqual(self.deepl_usage(SHOP_2), before + len(TEXT))  # the tenant's count
        # A key of every model's tenant may use it.
        status, _, _ = self.server.translate({"model": "tiny", "texts": ["a b"]}, bearer(OPEN))
        self.assertEqual(status, 200)

    def test_an_empty_bucket_is_429_with_retry_after_over_http(self):
        status, _, _ = self.server.translate({"model": "en-de", "texts": [TEXT]}, bearer(HTTP_SLOW))
        self.assertEqual(status, 200)
        status, headers, body = self.server.translate({"model": "en-de", "texts": [TEXT]},
                                                      bearer(HTTP_SLOW))
        self.assertEqual((status, body["error"]["code"]), (429, "RESOURCE_EXHAUSTED"))
        retry = int(headers["Retry-After"])
        self.assertTrue(10 <= retry <= 20, retry)  # 20 s a request, less what has passed
        self.assertIn("tenant http-slow is over its rate of 0.05 requests a second",
                      body["error"]["message"])
        # Every dialect says so in its shape, each with the header; none is charged.
        status, headers, _ = self.server.request(
            "POST", "/v2/translate", "text=Quit&target_lang=DE",
            {"Authorization": f"DeepL-Auth-Key {HTTP_SLOW}",
             "Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 429)
        self.assertTrue(10 <= int(headers["Retry-After"]) <= 20)
        status, headers, _ = self.server.request(
            "POST", "/translate", {"q": "Quit", "source": "en", "target": "de",
                                   "api_key": HTTP_SLOW},
            {"Content-Type": "application/json"})
        self.assertEqual(status, 429)
        self.assertTrue(10 <= int(headers["Retry-After"]) <= 20)
        self.assertEqual(self.deepl_usage(HTTP_SLOW), len(TEXT))

    def test_an_empty_bucket_is_resource_exhausted_with_retry_after_over_grpc(self):
        reply = self.grpc._translate(self.grpc.request("en-de", [TEXT]),
                                     metadata=(("authorization", f"Bearer {GRPC_SLOW}"),))
        self.assertEqual(reply.translations[0].hypotheses[0].text, self.want)
        error = self.grpc_error(GRPC_SLOW)
        self.assertEqual(error.code(), self.grpc.grpc.StatusCode.RESOURCE_EXHAUSTED)
        trailing = dict(error.trailing_metadata() or ())
        self.assertIn("retry-after", trailing)
        self.assertTrue(10 <= int(trailing["retry-after"]) <= 20, trailing)
        self.assertIn("retry after", error.details())

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

    def test_libretranslate_detect_takes_api_key_too(self):
        from libretranslatepy import LibreTranslateAPI
        url = f"http://127.0.0.1:{self.server.http_port}/"
        guesses = LibreTranslateAPI(url, api_key=OPEN).detect(TEXT)
        self.assertEqual(guesses[0]["language"], "en")
        for key in (None, UNKNOWN):
            body = {"q": TEXT} if key is None else {"q": TEXT, "api_key": key}
            request = urllib.request.Request(url + "detect", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with self.assertRaises(urllib.error.HTTPError) as raised:
                urllib.request.urlopen(request, timeout=60)
            self.assertEqual(raised.exception.code, 403, key)
            self.assertIn("API key", json.loads(raised.exception.read())["error"])
        self.assert_no_raw_key_in_log(self.server)

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
        status, headers, body = self.server.translate({"model": "en-de", "texts": ["Quit"]},
                                                      bearer(SMALL))
        self.assertEqual((status, body["error"]["code"]), (429, "RESOURCE_EXHAUSTED"))
        self.assertIn("quota of 30 characters", body["error"]["message"])
        self.assertNotIn("Retry-After", headers)  # the month, not seconds
        with self.assertRaises(deepl.AuthorizationException):
            deepl.Translator(UNKNOWN,
                             server_url=f"http://127.0.0.1:{self.server.http_port}").get_usage()
        # Another key is not touched by it.
        self.assertEqual(deepl.Translator(
            OPEN, server_url=f"http://127.0.0.1:{self.server.http_port}").translate_text(
                "Quit", target_lang="DE").text,
            self.free.translate({"texts": ["Quit"]})[2]["translations"][0]["hypotheses"][0]["text"])

    def test_rpt_client_sends_its_api_key(self):
        key_file = os.path.join(self.directory, "tenant.key")
        write(key_file, OPEN + "\n")
        base = [os.environ["RPT_CLIENT_BINARY"], "--server", f"127.0.0.1:{self.server.grpc_port}",
                "--model", "en-de", TEXT]
        for flags in (["--api-key", OPEN], ["--api-key-file", key_file]):
            with self.subTest(flags=flags[0]):
                keyed = subprocess.run(base + flags, capture_output=True, text=True, timeout=120)
                self.assertEqual((keyed.returncode, keyed.stdout), (0, self.want + "\n"),
                                 keyed.stderr)
        keyless = subprocess.run(base, capture_output=True, text=True, timeout=120)
        self.assertEqual(keyless.returncode, 16, keyless.stderr)  # UNAUTHENTICATED
        self.assertIn("UNAUTHENTICATED", keyless.stderr)
        both = subprocess.run(base + ["--api-key", OPEN, "--api-key-file", key_file],
                              capture_output=True, text=True, timeout=120)
        self.assertNotEqual(both.returncode, 0, both.stderr)  # one or the other

    def test_loadgen_sends_its_api_key(self):
        loadgen = os.path.join(os.path.dirname(os.environ["RPT_CLIENT_BINARY"]), "rpt-loadgen")
        lines = os.path.join(self.directory, "input.en")
        with open(lines, "w") as f:
            f.write("Save the file.\nQuit\n")
        for protocol, port in (("grpc", self.server.grpc_port), ("http", self.server.http_port)):
            base = [loadgen, "--protocol", protocol, "--server", f"127.0.0.1:{port}",
                    "--model", "en-de", "--input", lines, "--concurrency", "1"]
            keyed = subprocess.run(base + ["--api-key", OPEN], capture_output=True, text=True,
                                   timeout=120)
            self.assertEqual(keyed.returncode, 0, keyed.stderr)
            self.assertEqual(json.loads(keyed.stdout)["codes"], {"OK": 2})
            keyless = subprocess.run(base, capture_output=True, text=True, timeout=120)
            self.assertEqual(keyless.returncode, 1)
            self.assertEqual(json.loads(keyless.stdout)["codes"], {"UNAUTHENTICATED": 2})


class QueueFullServerTest(KeyedServerTest):
    """A call refused by a full admission queue, after its tenant was charged, is given back."""

    KEY = "queue-0123456789abcdef"

    def test_a_call_the_full_queue_refuses_is_charged_nothing(self):
        directory = tempfile.mkdtemp(prefix="rpt_keys_queue_")
        keys = os.path.join(directory, "keys.yaml")
        write(keys, f"tenants:\n  - name: q\n    keys: [{self.KEY}]\n"
                    f"    characters_per_month: 1000\n")
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--max-decoding-length",
                                "2000", "--max-active-sentences", "1",
                                "--max-queued-sentences", "3", "--api-keys", keys])
        try:
            def occupy():
                try:
                    server.translate({"texts": [TEXT] * 3, "options": {
                        "beam_size": 4, "max_length": 1900, "min_length": 1900}},
                        bearer(self.KEY), timeout=120)
                except OSError:
                    pass  # the server is killed below, once the test has its answer

            busy = threading.Thread(target=occupy)
            busy.start()
            self.assertTrue(server.wait_for_metric('rpt_active_rows{model="en-de"}',
                                                   lambda v: v > 0))
            status, headers, body = server.translate(
                {"texts": [TEXT] * 2, "options": {"max_length": 5}}, bearer(self.KEY))
            self.assertEqual((status, body["error"]["code"]), (429, "RESOURCE_EXHAUSTED"), body)
            self.assertEqual(headers.get("Retry-After"), "1")  # the queue's, not a bucket's
            _, _, usage = server.request(
                "GET", "/v2/usage", headers={"Authorization": f"DeepL-Auth-Key {self.KEY}"})
            self.assertEqual(json.loads(usage)["character_count"], 3 * len(TEXT))
            server.signal(signal.SIGKILL)
            busy.join()
            self.assert_no_raw_key_in_log(server, (self.KEY,))
        finally:
            server.close()
            shutil.rmtree(directory, ignore_errors=True)


class ReloadServerTest(KeyedServerTest):
    """SIGHUP on a server of its own: its keys change under it."""

    A = "tenant-a-0123456789abcdef"
    B = "tenant-b-0123456789abcdef"
    C = "tenant-a-new-0123456789abcdef"

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="rpt_keys_reload_")
        self.keys = os.path.join(self.directory, "keys.yaml")
        write(self.keys, f"tenants:\n  - name: a\n    keys: [{self.A}]\n"
                         f"    characters_per_month: 100\n"
                         f"  - name: b\n    keys: [{self.B}]\n")
        self.server = ServerProcess(["--model", f"en-de={MODEL}", "--api-keys", self.keys])

    def tearDown(self):
        self.server.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def status_of(self, key):
        return self.server.translate({"texts": [TEXT]}, bearer(key))[0]

    def reload(self, expect):
        count = self.server.log().count(expect)
        self.server.signal(signal.SIGHUP)
        give_up = time.monotonic() + 30
        while self.server.log().count(expect) == count:
            self.assertLess(time.monotonic(), give_up, self.server.log())
            time.sleep(0.02)

    def test_sighup_revokes_and_adds_keys_and_keeps_the_month(self):
        self.assertEqual(self.status_of(self.A), 200)
        self.assertEqual(self.status_of(self.C), 401)
        write(self.keys, f"tenants:\n  - name: a\n    keys: [{self.C}]\n"
                         f"    characters_per_month: 100\n")
        self.reload("reloaded")
        self.assertEqual(self.status_of(self.A), 401)  # revoked
        self.assertEqual(self.status_of(self.B), 401)  # its tenant removed
        self.assertEqual(self.status_of(self.C), 200)  # added
        # Tenant a kept its name: its month's count carried over (two calls of 14).
        status, _, body = self.server.request(
            "GET", "/v2/usage", headers={"Authorization": f"DeepL-Auth-Key {self.C}"})
        self.assertEqual(json.loads(body), {"character_count": 28, "character_limit": 100})
        log = self.server.log()
        self.assertIn("tenant a: key sha256:", log)
        self.assertIn("revoked", log)
        self.assertIn("tenant b removed", log)
        # The server still drains and exits 0 on SIGTERM after a reload.
        self.server.signal(signal.SIGTERM)
        self.assertEqual(self.server.wait_exit(60), 0)
        self.assert_no_raw_key_in_log(self.server, (self.A, self.B, self.C))

    def test_a_bad_file_on_sighup_keeps_the_keys_served(self):
        self.assertEqual(self.status_of(self.A), 200)
        for bad in (f"tenants:\n  - name: a\n    keys: [{self.C}]\n    colour: blue\n",
                    f"tenants:\n  - name: a\n    keys: [{self.C}\n",  # YAML syntax
                    ""):                                             # truncated
            write(self.keys, bad)
            self.reload("not reloaded")
            self.assertEqual(self.status_of(self.A), 200)
            self.assertEqual(self.status_of(self.B), 200)
            self.assertEqual(self.status_of(self.C), 401)
        log = self.server.log()
        self.assertIn("line 4: unknown field 'colour'", log)
        self.assertIn("the previous keys stay", log)
        os.remove(self.keys)
        self.reload("not reloaded")
        self.assertEqual(self.status_of(self.A), 200)
        self.assert_no_raw_key_in_log(self.server, (self.A, self.B, self.C))


class StartUpFilesTest(unittest.TestCase):
    """server/main.cc: a file named on the command line that cannot be read stops the start with
    1 naming it, as a model or a TLS file does; 2 stays for malformed flags."""

    def start(self, *flags):
        return subprocess.run(
            [server_binary(), "--listen", "127.0.0.1:0", "--metrics-port", "0", "--model",
             f"en-de={FIXTURE_MODEL}", *flags], capture_output=True, text=True, timeout=60)

    def test_a_missing_or_unreadable_file_exits_1_naming_it(self):
        with tempfile.TemporaryDirectory() as directory:
            missing = os.path.join(directory, "missing")
            cases = [(("--api-keys", missing), f"--api-keys: cannot read {missing}"),
                     (("--api-keys", directory), f"--api-keys: cannot read {directory}"),
                     (("--admin-key-file", missing), missing),
                     (("--admin-key-file", directory), directory),
                     (("--glossary", f"ui={missing}"), missing),
                     (("--glossary", f"ui={directory}"), directory)]
            for flags, message in cases:
                with self.subTest(flags=flags):
                    finished = self.start(*flags)
                    self.assertEqual(finished.returncode, 1, finished.stderr)
                    self.assertIn(message, finished.stdout + finished.stderr)
        finished = self.start("--api-keys")  # a flag without its value is malformed: 2
        self.assertEqual(finished.returncode, 2, finished.stderr)


if __name__ == "__main__":
    unittest.main()
