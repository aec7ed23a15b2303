"""Glossaries through rpt-server on loopback (the bundled en-de model), over gRPC and the JSON
API: a call's entries and a named glossary (--glossary) enforced and reported per text, the
call's entries winning over the named ones, the cache keeping glossaries apart, every refusal
with its status naming the entry, ListModels, the metrics, and a bad glossary file refusing
start-up naming its line.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/glossary_server_test.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

from rpt_server import REPO, GrpcTranslator, ServerProcess, server_binary

MODEL = os.path.join(REPO, "models", "en-de")
SENTENCE = "Copy the file to the file server."


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class GlossaryServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="rpt_glossary_test_")
        ui = write(cls.directory, "ui.tsv",
                   "# product terms\nfile\tDokument\nsettings\tKonfiguration\n")
        brand = write(cls.directory, "brand.tsv", "Nautilus\tNautilus\n")
        cls.server = ServerProcess(["--model", f"en-de={MODEL}", "--glossary", f"ui={ui}",
                                    "--glossary", f"en-de:brand={brand}"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def grpc_error(self, call):
        import grpc
        with self.assertRaises(grpc.RpcError) as caught:
            call()
        return caught.exception.code().name, caught.exception.details()

    def test_call_entries_are_enforced_and_reported(self):
        response = self.grpc.translate("en-de", [SENTENCE, "Quit"], glossary=[("file", "Akte")])
        first = response.translations[0]
        self.assertEqual(first.hypotheses[0].text.count("Akte"), 2, first.hypotheses[0].text)
        self.assertTrue(first.hypotheses[0].terms_kept)
        self.assertEqual([(t.source, t.target, t.matches, t.kept) for t in first.glossary_terms],
                         [("file", "Akte", 2, True)])
        self.assertEqual(len(response.translations[1].glossary_terms), 0)
        self.assertTrue(response.translations[1].hypotheses[0].terms_kept)

    def test_named_glossary_with_call_entries_winning(self):
        text = "Open the settings and the file."
        named = self.grpc.translate("en-de", [text], glossary_name="ui").translations[0]
        self.assertIn("Dokument", named.hypotheses[0].text)
        self.assertIn("Konfiguration", named.hypotheses[0].text)
        both = self.grpc.translate("en-de", [text], glossary=[("file", "Akte")],
                                   glossary_name="ui").translations[0]
        self.assertIn("Akte", both.hypotheses[0].text)
        self.assertNotIn("Dokument", both.hypotheses[0].text)
        self.assertIn("Konfiguration", both.hypotheses[0].text)
        self.assertEqual({t.target for t in both.glossary_terms}, {"Akte", "Konfiguration"})

    def test_the_cache_keeps_glossaries_apart(self):
        text = "The file is read-only."
        plain = self.grpc.translate("en-de", [text]).translations[0].hypotheses[0].text
        for _ in range(2):  # the second answer of each comes from the cache
            akte = self.grpc.translate("en-de", [text], glossary=[("file", "Akte")])
            self.assertIn("Akte", akte.translations[0].hypotheses[0].text)
            named = self.grpc.translate("en-de", [text], glossary_name="ui")
            self.assertIn("Dokument", named.translations[0].hypotheses[0].text)
            again = self.grpc.translate("en-de", [text]).translations[0].hypotheses[0].text
            self.assertEqual(again, plain)
        self.assertNotIn("Akte", plain)

    def test_json_api(self):
        status, _, body = self.server.translate(
            {"model": "en-de", "texts": [SENTENCE], "glossary": [{"source": "file",
                                                                  "target": "Akte"}]})
        self.assertEqual(status, 200, body)
        translation = body["translations"][0]
        self.assertEqual(translation["hypotheses"][0]["text"].count("Akte"), 2, body)
        self.assertTrue(translation["hypotheses"][0]["terms_kept"])
        self.assertEqual(translation["glossary_terms"],
                         [{"source": "file", "target": "Akte", "matches": 2, "kept": True}])
        status, _, body = self.server.translate(
            {"model": "en-de", "texts": ["Nautilus opened the file"], "glossary_name": "brand"})
        self.assertEqual(status, 200, body)
        self.assertIn("Nautilus", body["translations"][0]["hypotheses"][0]["text"])

    def test_refusals_name_the_entry(self):
        cases = [
            ([("", "x")], "glossary[0]: the source term is empty"),
            ([("file", "Akte"), ("File", "Datei")],
             "glossary[1]: source \"File\" is listed before with target \"Akte\""),
            ([("a", "b")] + [(f"w{i}", "x") for i in range(1000)],
             "glossary has 1001 entries, over the limit of 1000"),
            ([("name", "{0}")], "glossary[0]: the target term holds a protected span ({0})"),
        ]
        for entries, message in cases:
            code, details = self.grpc_error(
                lambda: self.grpc.translate("en-de", ["Open"], glossary=entries))
            self.assertEqual(code, "INVALID_ARGUMENT")
            self.assertIn(message, details)
            status, _, body = self.server.translate(
                {"model": "en-de", "texts": ["Open"],
                 "glossary": [{"source": s, "target": t} for s, t in entries]})
            self.assertEqual((status, body["error"]["code"]), (400, "INVALID_ARGUMENT"))
            self.assertIn(message, body["error"]["message"])
        # Invalid UTF-8 can only come over gRPC (JSON text is UTF-8): swap it into the bytes.
        raw = self.grpc.request("en-de", ["Open"], glossary=[("file", "@@")]).SerializeToString()
        code, details = self.grpc_error(
            lambda: self.grpc.translate_raw(raw.replace(b"@@", b"\xff\xfe")))
        self.assertEqual((code, details), ("INVALID_ARGUMENT",
                                           "glossary[0]: the target term is not valid UTF-8"))
        code, details = self.grpc_error(
            lambda: self.grpc.translate("en-de", ["Open"], glossary_name="legal"))
        self.assertEqual(code, "NOT_FOUND")
        self.assertIn("no glossary named 'legal'; loaded: brand, ui", details)
        status, _, body = self.server.translate(
            {"model": "en-de", "texts": ["Open"], "glossary_name": "legal"})
        self.assertEqual(status, 404, body)
        for glossary, message in [({"source": "a"}, "glossary must be an array"),
                                  ([["a", "b"]], "glossary[0] must be an object"),
                                  ([{"source": "a", "target": 1}],
                                   "glossary[0].target must be a string"),
                                  ([{"source": "a", "goal": "b"}],
                                   "glossary[0] has an unknown field \"goal\"")]:
            status, _, body = self.server.translate(
                {"model": "en-de", "texts": ["Open"], "glossary": glossary})
            self.assertEqual(status, 400, body)
            self.assertIn(message, body["error"]["message"])

    def test_both_clients_send_a_glossary_file(self):
        path = write(self.directory, "call.tsv", "# call terms\nfile\tAkte\n")
        address = f"127.0.0.1:{self.server.grpc_port}"
        client = os.environ.get("RPT_CLIENT_BINARY")
        outputs = [subprocess.run(
            [sys.executable, os.path.join(REPO, "client", "python", "translate_client.py"),
             "--server", address, "--glossary", path, SENTENCE],
            capture_output=True, text=True, timeout=60, check=True).stdout]
        if client:
            outputs.append(subprocess.run(
                [client, "--server", address, "--glossary", path, SENTENCE],
                capture_output=True, text=True, timeout=60, check=True).stdout)
        else:
            print("RPT_CLIENT_BINARY unset: rpt-client not checked", file=sys.stderr)
        for output in outputs:
            self.assertEqual(output.count("Akte"), 2, output)
        bad = write(self.directory, "bad.tsv", "file Akte\n")
        finished = subprocess.run(
            [sys.executable, os.path.join(REPO, "client", "python", "translate_client.py"),
             "--server", address, "--glossary", bad, SENTENCE], capture_output=True, text=True,
            timeout=60)
        self.assertNotEqual(finished.returncode, 0)
        self.assertIn(f"{bad}:1:", finished.stderr)

    def test_list_models_and_metrics(self):
        models = self.grpc.list_models().models
        self.assertEqual([(g.name, g.entries) for g in models[0].glossaries],
                         [("brand", 1), ("ui", 2)])
        self.assertEqual(self.server.metric(
            'rpt_glossary_entries{glossary="ui",model="en-de"}'), 2)
        sample = 'rpt_glossary_terms_total{model="en-de",outcome="kept"}'
        before = self.server.metric(sample) or 0
        self.grpc.translate("en-de", ["Save the settings of the settings dialog"],
                            glossary_name="ui", use_cache=False)
        self.assertEqual(self.server.metric(sample), before + 1)  # one entry, matched twice
        self.assertEqual(self.server.metric(
            'rpt_glossary_terms_total{model="en-de",outcome="missed"}'), 0)


class GlossaryStartupTest(unittest.TestCase):
    def test_a_bad_file_refuses_start_up_naming_the_line(self):
        with tempfile.TemporaryDirectory() as directory:
            bad = write(directory, "bad.tsv", "file\tDatei\nsettings Einstellungen\n")
            finished = subprocess.run(
                [server_binary(), "--listen", "127.0.0.1:0", "--metrics-port", "0", "--model",
                 f"en-de={MODEL}", "--glossary", f"ui={bad}"],
                capture_output=True, text=True, timeout=60)
            self.assertNotEqual(finished.returncode, 0)
            self.assertIn(f"{bad}:2: expected \"source<TAB>target\", found no tab",
                          finished.stdout + finished.stderr)
            finished = subprocess.run(
                [server_binary(), "--model", f"en-de={MODEL}", "--glossary", f"fr:ui={bad}"],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(finished.returncode, 2)
            self.assertIn("--glossary names no --model: 'fr'", finished.stderr)


if __name__ == "__main__":
    sys.exit(unittest.main())
