"""A multilingual model on the real rpt-server (config.json's language_pairs,
docs/model-format.md): requests are routed to a pair by their languages and read its prefix,
ListModels lists the pairs, a call that leaves the pair open is refused naming the choices, the
translation cache keeps the pairs apart, the input limit leaves the prefix out, LibreTranslate
and DeepL list the pairs' languages, and so do both clients' --list-models.

The model is the bundled en-de under a config with three pairs: en->de without a prefix, en->fr
read after "Good morning." and *->ro after "Thank you." (English words it knows, so each pair's
output shows its prefix's translation: what it translates is irrelevant, that each pair reads its
own prefix is tested). Beside it, en-fr declared as fr->ro (tests/server/relabelled_model.py), so
that a source's own pair wins over "*".

    RPT_SERVER_BINARY=build/server/rpt-server RPT_CLIENT_BINARY=build/client/rpt-client \\
        python3 tests/server/language_pairs_test.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import grpc

from relabelled_model import RelabelledModel
from rpt_server import REPO, GrpcTranslator, ServerProcess, model_arguments

PAIRS = [{"source": "en", "target": "de", "prefix": ""},
         {"source": "en", "target": "fr", "prefix": "Good morning."},
         {"source": "*", "target": "ro", "prefix": "Thank you."}]
TEXT = "Save the file before you close the window."
MAX_INPUT_LENGTH = 2048  # rpt-server's default maximum sequence length: the cap is the model's


def multilingual_model(directory):
    """models/en-de in `directory` (linked) with PAIRS as its language pairs."""
    source = os.path.join(REPO, "models", "en-de")
    for name in os.listdir(source):
        if name != "config.json":
            os.symlink(os.path.join(source, name), os.path.join(directory, name))
    with open(os.path.join(source, "config.json")) as f:
        config = json.load(f)
    config.update(name="multi", language_pairs=PAIRS)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return directory


class LanguagePairsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="rpt_multi_")
        cls.fr_ro = RelabelledModel(os.path.join(REPO, "models", "en-fr"), "fr", "ro")
        cls.server = ServerProcess(
            model_arguments({"multi": multilingual_model(cls.directory),
                             "fr-ro": cls.fr_ro.directory})
            + ["--beam-size", "2", "--max-input-length", str(MAX_INPUT_LENGTH)])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()
        cls.fr_ro.close()
        shutil.rmtree(cls.directory, ignore_errors=True)

    def call(self, source="", target="", model="", texts=(TEXT,), **options):
        """A Translate call by languages; the response, or the RpcError."""
        pb = self.grpc.pb
        request = pb.TranslateRequest(
            model=pb.ModelSelector(model=model, source_language=source, target_language=target),
            texts=[t.encode() for t in texts], options=pb.DecodingOptions(**options))
        try:
            return self.grpc._translate(request, timeout=60)
        except grpc.RpcError as error:
            return error

    def translated(self, source, target, **options):
        response = self.call(source, target, **options)
        self.assertNotIsInstance(response, grpc.RpcError, f"{source}->{target}")
        return response

    def cache_hits(self):
        return self.server.metric('rpt_cache_hits_total{model="multi"}') or 0.0

    def test_the_target_picks_the_pair_and_its_prefix(self):
        answers = {target: self.translated("en", target, use_cache=False)
                   for target in ("de", "fr", "ro")}
        for target, response in answers.items():
            self.assertEqual(response.model, "multi", target)
        texts = {target: r.translations[0].hypotheses[0].text for target, r in answers.items()}
        self.assertEqual(len(set(texts.values())), 3, texts)
        # Each pair's output is the model's for its prefix and the text, read as one source.
        for target, pair in zip(("fr", "ro"), PAIRS[1:]):
            whole = self.translated("en", "de", texts=[pair["prefix"] + " " + TEXT],
                                    split_sentences="SPLIT_SENTENCES_NONE", use_cache=False)
            self.assertEqual(whole.translations[0].hypotheses[0].text, texts[target])
            self.assertEqual(whole.translations[0].source_tokens,
                             answers[target].translations[0].source_tokens)
        # "*" reads any source; a source's own pair (fr-ro's fr->ro) wins over it; with no
        # source, both serve ro.
        self.assertEqual(self.translated("it", "ro").model, "multi")
        self.assertEqual(self.translated("fr", "ro").model, "fr-ro")
        error = self.call("", "ro")
        self.assertEqual(error.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("several models match *->ro", error.details())

    def test_language_codes_are_read_case_aside_and_a_region_falls_back(self):
        want = self.translated("en", "fr").translations[0].hypotheses[0].text
        for source, target in (("EN", "FR"), ("en-US", "fr-FR"), ("En_gb", "FR-ca")):
            with self.subTest(source=source, target=target):
                response = self.translated(source, target)
                self.assertEqual(response.model, "multi")
                self.assertEqual(response.translations[0].hypotheses[0].text, want)
                status, _, body = self.server.translate(
                    {"source_language": source, "target_language": target, "texts": [TEXT]})
                self.assertEqual(status, 200, body)
                self.assertEqual(body["translations"][0]["hypotheses"][0]["text"], want)
        # A source's own pair still wins over "*" (fr-ro's FR -> RO).
        self.assertEqual(self.translated("FR-be", "RO").model, "fr-ro")
        self.assertEqual(self.call("en-US", "it").code(), grpc.StatusCode.NOT_FOUND)

    def test_a_refusal_names_the_fields_of_the_callers_protocol(self):
        error = self.call("", "ro")
        self.assertIn("name one with model.model, or choose with model.source_language and "
                      "model.target_language", error.details())
        status, _, body = self.server.translate({"target_language": "ro", "texts": [TEXT]})
        self.assertEqual(status, 400, body)
        message = body["error"]["message"]
        self.assertIn("name one with model, or choose with source_language and target_language",
                      message)
        self.assertNotIn("model.model", message)

    def test_a_call_that_leaves_the_pair_open_is_refused_naming_the_choices(self):
        for selector, expected in (({"model": "multi"}, "name the target language (one of de, "
                                    "fr, ro)"),
                                   ({"source": "en"}, "name the target language (one of de, fr)")):
            with self.subTest(selector=selector):
                error = self.call(**selector)
                self.assertIsInstance(error, grpc.RpcError)
                self.assertEqual(error.code(), grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(expected, error.details())
        error = self.call("en", "it")
        self.assertEqual(error.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("multi (en->de, en->fr, *->ro)", error.details())
        # A named model's languages pick its pair; a one-pair model ignores them, as before.
        self.assertEqual(self.call("en", "fr", model="multi").translations[0].hypotheses[0].text,
                         self.translated("en", "fr").translations[0].hypotheses[0].text)
        self.assertEqual(self.call("en", "de", model="fr-ro").model, "fr-ro")
        # Over HTTP too.
        status, _, body = self.server.translate({"model": "multi", "texts": [TEXT]})
        self.assertEqual(status, 400, body)
        self.assertIn("one of de, fr, ro", json.dumps(body))

    def test_the_cache_never_answers_one_pair_for_another(self):
        text = "Close the window without saving."
        fresh = {target: self.translated("en", target, texts=[text], use_cache=False)
                 for target in ("de", "fr", "ro")}
        hits = self.cache_hits()
        for target in ("fr", "de", "ro"):  # each fills the cache for its own pair
            self.assertEqual(self.translated("en", target, texts=[text]), fresh[target], target)
        self.assertEqual(self.cache_hits(), hits, "a pair was answered from another's entry")
        for target in ("de", "fr", "ro"):
            self.assertEqual(self.translated("en", target, texts=[text]), fresh[target], target)
        self.assertEqual(self.cache_hits(), hits + 3)

    def test_list_models_lists_every_pair(self):
        models = {m.name: m for m in self.grpc.list_models().models}
        multi = models["multi"]
        self.assertEqual([(p.source_language, p.target_language) for p in multi.language_pairs],
                         [(p["source"], p["target"]) for p in PAIRS])
        self.assertEqual((multi.source_language, multi.target_language), ("en", "de"))
        self.assertEqual([(p.source_language, p.target_language)
                          for p in models["fr-ro"].language_pairs], [("fr", "ro")])
        # The input limit leaves room for the longest prefix (the model appends no eos).
        tokens = {target: self.translated("en", target, use_cache=False).translations[0]
                  .source_tokens for target in ("de", "fr", "ro")}
        longest_prefix = max(tokens.values()) - tokens["de"]
        self.assertGreater(longest_prefix, 0)
        self.assertEqual(multi.max_input_length, MAX_INPUT_LENGTH - longest_prefix)
        self.assertEqual(models["fr-ro"].max_input_length, MAX_INPUT_LENGTH)
        status, _, body = self.server.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        listed = {m["name"]: m for m in json.loads(body)["models"]}
        self.assertEqual(listed["multi"]["language_pairs"][2],
                         {"source_language": "*", "target_language": "ro"})
        # Both clients' --list-models.
        address = f"127.0.0.1:{self.server.grpc_port}"
        clients = [[sys.executable, os.path.join(REPO, "client", "python", "translate_client.py")]]
        if os.environ.get("RPT_CLIENT_BINARY"):
            clients.append([os.environ["RPT_CLIENT_BINARY"]])
        else:
            print("RPT_CLIENT_BINARY unset: rpt-client not checked", file=sys.stderr)
        for client in clients:
            listing = subprocess.run(client + ["--server", address, "--list-models"],
                                     capture_output=True, text=True, timeout=60,
                                     check=True).stdout
            self.assertIn("multi\ten->de,en->fr,*->ro\t", listing)
            self.assertIn("fr-ro\tfr->ro\t", listing)

    def test_libretranslate_and_deepl_list_the_pairs_languages(self):
        status, _, body = self.server.request("GET", "/languages")
        self.assertEqual(status, 200)
        targets = {language["code"]: language["targets"] for language in json.loads(body)}
        # "*" is listed from every language the server names: en, de, fr, ro.
        self.assertEqual(targets["en"], ["de", "fr", "ro"])
        self.assertEqual(targets["fr"], ["ro"])
        self.assertEqual(targets["de"], ["ro"])
        self.assertNotIn("*", targets)
        headers = {"Authorization": "DeepL-Auth-Key test-key:fx"}
        status, _, body = self.server.request("GET", "/v2/languages?type=target", headers=headers)
        self.assertEqual(status, 200, body)
        self.assertEqual([l["language"] for l in json.loads(body)], ["DE", "FR", "RO"])
        status, _, body = self.server.request("GET", "/v2/languages?type=source", headers=headers)
        self.assertEqual(status, 200, body)
        self.assertEqual([l["language"] for l in json.loads(body)], ["DE", "EN", "FR", "RO"])
        # LibreTranslate routes by target: fr is the en->fr pair's.
        status, _, body = self.server.request(
            "POST", "/translate", json.dumps({"q": TEXT, "source": "en", "target": "fr"}),
            {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["translatedText"],
                         self.translated("en", "fr").translations[0].hypotheses[0].text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
