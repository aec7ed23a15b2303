"""The admin API on the real rpt-server (server/admin_api.h): models loaded, replaced and unloaded
while calls run, named glossaries created, replaced and deleted, kept across a restart; the admin
key asked for and reloaded on SIGHUP; rpt-client's admin verbs. The bar: a model replaced while
100 calls are in flight loses none of them, each answer equals the old or the new model's
translation as its start and end times say; an unload drains; a model that does not fit is
refused and the server keeps serving; a glossary change shows in the next call, never in a cached
answer of the old entries; the admin key never reaches the log.

    RPT_SERVER_BINARY=build/server/rpt-server RPT_CLIENT_BINARY=build/client/rpt-client \\
        python3 tests/server/admin_api_test.py
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

from rpt_server import REPO, ServerProcess, http_call

EN_DE = os.path.join(REPO, "models", "en-de")
EN_FR = os.path.join(REPO, "models", "en-fr")
KEY = "admin-0123456789abcdef"
NEW_KEY = "admin-2-0123456789abcdef"
TEXTS = [f"Save the file {n} before you close the window. Then open the settings and check "
         f"that the disk is not full." for n in range(100)]


def admin(server, method, path, body=None, key=KEY):
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    status, response_headers, raw = http_call(
        server.http_port, method, path, None if body is None else json.dumps(body), headers,
        timeout=300)
    return status, response_headers, json.loads(raw) if raw else None


def translate(server, text, model, glossary_name=None, use_cache=True):
    body = {"texts": [text], "model": model, "options": {"use_cache": use_cache}}
    if glossary_name:
        body["glossary_name"] = glossary_name
    status, _, raw = http_call(server.http_port, "POST", "/v1/translate", json.dumps(body),
                               {"Content-Type": "application/json"})
    answer = json.loads(raw)
    if status != 200:
        return status, answer
    return status, answer["translations"][0]["hypotheses"][0]["text"]


class AdminServerTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="rpt_admin_test_")
        self.key_file = os.path.join(self.directory, "admin.key")
        self.glossary_dir = os.path.join(self.directory, "glossaries")
        with open(self.key_file, "w") as f:
            f.write(KEY + "\n")
        self.server = self.start()

    def start(self):
        return ServerProcess(["--model", f"en-de={EN_DE}", "--admin-key-file", self.key_file,
                              "--glossary-dir", self.glossary_dir, "--threads", "1"])

    def tearDown(self):
        log = self.server.log()
        self.server.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.assertNotIn(KEY, log)
        self.assertNotIn(NEW_KEY, log)

    def test_the_admin_key_is_asked_for_and_reloaded_on_sighup(self):
        status, headers, body = admin(self.server, "GET", "/admin/models", key=None)
        self.assertEqual(status, 401)
        self.assertIn("Bearer", headers.get("WWW-Authenticate", ""))
        self.assertEqual(admin(self.server, "GET", "/admin/models", key="wrong-0123456789abc")[0],
                         403)
        status, _, body = admin(self.server, "GET", "/admin/models")
        self.assertEqual(status, 200)
        self.assertEqual([m["name"] for m in body["models"]], ["en-de"])
        with open(self.key_file, "w") as f:
            f.write(NEW_KEY + "\n")
        self.server.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while admin(self.server, "GET", "/admin/models")[0] != 403:
            self.assertLess(time.monotonic(), deadline, "SIGHUP did not revoke the old key")
            time.sleep(0.05)
        self.assertEqual(admin(self.server, "GET", "/admin/models", key=NEW_KEY)[0], 200)
        # A bad file keeps the key served.
        with open(self.key_file, "w") as f:
            f.write("short\n")
        self.server.process.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        self.assertEqual(admin(self.server, "GET", "/admin/models", key=NEW_KEY)[0], 200)

    def test_load_translate_and_unload_a_model(self):
        status, _, body = admin(self.server, "POST", "/admin/models",
                                {"name": "fr", "directory": EN_FR})
        self.assertEqual(status, 201, body)
        self.assertEqual(body["model"]["language_pairs"], [{"source": "en", "target": "fr"}])
        status, french = translate(self.server, "Save the file.", "fr")
        self.assertEqual(status, 200)
        reference = ServerProcess(["--model", f"fr={EN_FR}", "--threads", "1"])
        try:
            self.assertEqual(translate(reference, "Save the file.", "fr"), (200, french))
        finally:
            reference.close()
        # The languages follow: LibreTranslate's list names French now.
        _, _, raw = http_call(self.server.http_port, "GET", "/languages")
        self.assertIn("fr", [t for lang in json.loads(raw) for t in lang["targets"]])
        self.assertEqual(admin(self.server, "POST", "/admin/models",
                               {"name": "fr", "directory": EN_FR})[0], 409)
        status, _, body = admin(self.server, "POST", "/admin/models",
                                {"name": "x", "directory": self.directory})
        self.assertEqual(status, 400, body)
        # The loader's reason, without the source file and line the log keeps.
        self.assertIn("cannot load model x", body["error"]["message"])
        self.assertNotRegex(body["error"]["message"], r"\.(cc|h):[0-9]+")
        self.assertRegex(self.server.log(), r"loading model x .*\.cc:[0-9]+")
        self.assertEqual(admin(self.server, "POST", "/admin/models",
                               {"name": "../x", "directory": EN_FR})[0], 400)
        # A field given twice is refused naming it, not read as its last value.
        status, _, raw = http_call(
            self.server.http_port, "POST", "/admin/models",
            json.dumps({"name": "y", "directory": EN_FR})[:-1] + ', "name": "z"}',
            {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
        self.assertEqual(status, 400, raw)
        self.assertIn("name is given twice", json.loads(raw)["error"]["message"])
        # An unload drains: calls sent just before it all finish.
        results = []

        def call(text):
            results.append(translate(self.server, text, "fr", use_cache=False)[0])

        callers = [threading.Thread(target=call, args=(t,)) for t in TEXTS[:12]]
        for caller in callers:
            caller.start()
        time.sleep(0.05)
        status, _, body = admin(self.server, "DELETE", "/admin/models/fr")
        self.assertEqual(status, 200, body)
        for caller in callers:
            caller.join()
        # Each call was routed before the unload (200) or after it (404): none failed otherwise.
        self.assertTrue(set(results) <= {200, 404}, results)
        self.assertEqual(translate(self.server, "Save the file.", "fr")[0], 404)
        self.assertEqual(admin(self.server, "DELETE", "/admin/models/en-de")[0], 400)  # the last

    def test_a_model_that_does_not_fit_is_refused_and_the_server_serves_on(self):
        huge = os.path.join(self.directory, "huge")
        shutil.copytree(EN_FR, huge)
        with open(os.path.join(huge, "model.bin"), "r+b") as f:
            f.truncate(1 << 40)  # sparse: a terabyte of weights, on paper
        status, _, body = admin(self.server, "POST", "/admin/models",
                                {"name": "huge", "directory": huge})
        self.assertEqual(status, 507, body)
        self.assertEqual(body["error"]["code"], "RESOURCE_EXHAUSTED")
        self.assertIn("MiB", body["error"]["message"])
        self.assertEqual(translate(self.server, "Save the file.", "en-de")[0], 200)

    def test_replace_while_100_calls_are_in_flight(self):
        old = {t: translate(self.server, t, "en-de", use_cache=False)[1] for t in TEXTS}
        results = {}

        def call(text):
            started = time.monotonic()
            status, answer = translate(self.server, text, "en-de", use_cache=False)
            results[text] = (started, time.monotonic(), status, answer)

        callers = [threading.Thread(target=call, args=(t,)) for t in TEXTS]
        for caller in callers:
            caller.start()
        sent = time.monotonic()  # every call started before the replace is sent
        status, _, body = admin(self.server, "PUT", "/admin/models/en-de", {"directory": EN_FR})
        answered = time.monotonic()
        self.assertEqual(status, 200, body)
        for caller in callers:
            caller.join()
        new = {t: translate(self.server, t, "en-de", use_cache=False)[1] for t in TEXTS}
        self.assertNotEqual(old, new)
        finished_on_old = 0  # calls in flight when the replace was sent, answered by the old model
        for text, (started, ended, status, answer) in results.items():
            self.assertEqual(status, 200, (text, answer))
            if ended < sent:
                self.assertEqual(answer, old[text], text)
            elif started > answered:
                self.assertEqual(answer, new[text], text)
            else:
                self.assertIn(answer, (old[text], new[text]), text)
                finished_on_old += started < sent and answer == old[text] != new[text]
        self.assertGreater(finished_on_old, 0, "no call in flight finished on the old model")
        _, _, body = admin(self.server, "GET", "/admin/models")
        self.assertEqual(body["models"][0]["directory"], EN_FR)

    def test_glossaries_change_at_once_and_survive_a_restart(self):
        text = "Save the file."
        plain = translate(self.server, text, "en-de")[1]
        status, _, body = admin(self.server, "PUT", "/admin/glossaries/legal",
                                {"entries": [["file", "Akte"]]})
        self.assertEqual(status, 200, body)
        status, first = translate(self.server, text, "en-de", "legal")
        self.assertEqual(status, 200)
        self.assertIn("Akte", first)
        self.assertEqual(translate(self.server, text, "en-de", "legal"), (200, first))  # cached
        admin(self.server, "PUT", "/admin/glossaries/legal", {"entries": [["file", "Urkunde"]]})
        status, second = translate(self.server, text, "en-de", "legal")
        self.assertIn("Urkunde", second)  # not the cached answer of the old entries
        self.assertNotIn("Akte", second)
        # A term the model cannot write is refused, naming the entry; the glossary stays.
        status, _, body = admin(self.server, "PUT", "/admin/glossaries/legal",
                                {"entries": [["file", "{0}"]]})
        self.assertEqual(status, 400, body)
        self.assertEqual(translate(self.server, text, "en-de", "legal"), (200, second))
        # Kept across a restart (--glossary-dir), then deleted.
        self.server.close()
        self.server = self.start()
        _, _, body = admin(self.server, "GET", "/admin/glossaries")
        self.assertEqual(body["glossaries"], [{"model": "en-de", "name": "legal", "entries": 1}])
        self.assertEqual(translate(self.server, text, "en-de", "legal"), (200, second))
        self.assertEqual(admin(self.server, "DELETE", "/admin/glossaries/legal")[0], 200)
        self.assertEqual(translate(self.server, text, "en-de", "legal")[0], 404)
        self.assertEqual(translate(self.server, text, "en-de")[1], plain)
        self.assertEqual(admin(self.server, "DELETE", "/admin/glossaries/legal")[0], 404)
        self.server.close()
        self.server = self.start()
        self.assertEqual(admin(self.server, "GET", "/admin/glossaries")[2]["glossaries"], [])

    def test_rpt_client_admin_verbs(self):
        client = os.environ.get("RPT_CLIENT_BINARY")
        if not client:
            self.skipTest("set RPT_CLIENT_BINARY to the rpt-client binary")
        url = f"http://127.0.0.1:{self.server.http_port}"
        tsv = os.path.join(self.directory, "legal.tsv")
        with open(tsv, "w") as f:
            f.write("# a comment\nfile\tAkte\n")

        def run(*verb):
            return subprocess.run([client, "admin", "--url", url, "--key-file", self.key_file,
                                   *verb], capture_output=True, text=True, timeout=300)

        done = run("load", "fr", EN_FR)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["model"]["name"], "fr")
        done = run("put-glossary", "legal", tsv, "--for-model", "en-de")
        self.assertEqual(done.returncode, 0, done.stderr)
        listed = json.loads(run("glossaries").stdout)["glossaries"]
        self.assertEqual(listed, [{"model": "en-de", "name": "legal", "entries": 1}])
        self.assertIn("Akte", translate(self.server, "Save the file.", "en-de", "legal")[1])
        done = run("load", "fr", EN_FR)
        self.assertEqual(done.returncode, 1)
        self.assertIn("409", done.stderr)
        self.assertEqual(run("unload", "fr").returncode, 0)
        self.assertEqual(run("delete-glossary", "legal", "--for-model", "en-de").returncode, 0)
        names = [m["name"] for m in json.loads(run("models").stdout)["models"]]
        self.assertEqual(names, ["en-de"])


class WatchFilesTest(unittest.TestCase):
    """--watch-files: a mounted Secret or ConfigMap changes without a signal (Kubernetes swaps a
    symlink); the admin key and a --glossary file are reread when their contents change."""

    def test_changed_files_are_reread_without_a_signal(self):
        directory = tempfile.mkdtemp(prefix="rpt_watch_test_")
        key_file = os.path.join(directory, "admin.key")
        glossary = os.path.join(directory, "legal.tsv")
        with open(key_file, "w") as f:
            f.write(KEY + "\n")
        with open(glossary, "w") as f:
            f.write("file\tAkte\n")
        server = ServerProcess(["--model", f"en-de={EN_DE}", "--admin-key-file", key_file,
                                "--glossary", f"legal={glossary}", "--watch-files", "0.2",
                                "--threads", "1"])
        try:
            self.assertIn("Akte", translate(server, "Save the file.", "en-de", "legal")[1])
            # Written as Kubernetes does: a new file renamed over the old path.
            for path, text in ((key_file, NEW_KEY + "\n"), (glossary, "file\tUrkunde\n")):
                with open(path + ".new", "w") as f:
                    f.write(text)
                os.replace(path + ".new", path)
            deadline = time.monotonic() + 10
            while admin(server, "GET", "/admin/models")[0] != 403:
                self.assertLess(time.monotonic(), deadline, server.log())
                time.sleep(0.05)
            self.assertEqual(admin(server, "GET", "/admin/models", key=NEW_KEY)[0], 200)
            self.assertIn("Urkunde", translate(server, "Save the file.", "en-de", "legal")[1])
            # A broken glossary keeps the entries served, and says why.
            with open(glossary, "w") as f:
                f.write("no tab here\n")
            while "not reread, the old entries stay" not in server.log():
                self.assertLess(time.monotonic(), deadline + 10, server.log())
                time.sleep(0.05)
            self.assertIn("Urkunde", translate(server, "Save the file.", "en-de", "legal")[1])
            self.assertNotIn(NEW_KEY, server.log())
        finally:
            server.close()
            shutil.rmtree(directory, ignore_errors=True)


class PublicPortTest(unittest.TestCase):
    def test_the_public_port_has_no_admin_api(self):
        directory = tempfile.mkdtemp(prefix="rpt_admin_public_")
        key_file = os.path.join(directory, "admin.key")
        with open(key_file, "w") as f:
            f.write(KEY + "\n")
        server = ServerProcess(["--model", f"en-de={EN_DE}", "--admin-key-file", key_file,
                                "--http-listen", "127.0.0.1:0", "--threads", "1"])
        try:
            status, _, _ = http_call(server.public_port, "GET", "/admin/models", None,
                                     {"Authorization": f"Bearer {KEY}"})
            self.assertEqual(status, 404)
            self.assertEqual(admin(server, "GET", "/admin/models")[0], 200)  # the metrics port
        finally:
            server.close()
            shutil.rmtree(directory, ignore_errors=True)


class AdminOffTest(unittest.TestCase):
    def test_without_an_admin_key_every_admin_call_is_refused(self):
        server = ServerProcess(["--model", f"en-de={EN_DE}", "--threads", "1"])
        try:
            status, _, body = admin(server, "GET", "/admin/models")
            self.assertEqual(status, 403)
            self.assertIn("--admin-key-file", body["error"]["message"])
            self.assertEqual(admin(server, "POST", "/admin/models",
                                   {"name": "fr", "directory": EN_FR})[0], 403)
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
