"""The CTranslate2 model built from an rpt model directory translates as rpt does.

    RPT_TRANSLATE=build/cli/rpt-translate python3 -m unittest tests/tools/rpt_to_ctranslate2_test.py -v

tools/rpt_to_ctranslate2.py builds each bundled model (models/*/) and each supported golden
fixture (tests/fixtures/*/model) for CTranslate2; both engines then translate the same sentences
greedily and must give the same text, sentence for sentence. That proves the weight layouts
(fused QKV, cross-attention K/V, relative tables, tied/shared embeddings, biases, sinusoids) and
the special tokens, which bench/compare_ctranslate2.py relies on. rpt-translate comes from
$RPT_TRANSLATE (ctest sets it) or build/cli/rpt-translate. Needs ctranslate2 and sentencepiece
(tools/setup.sh installs them); without them, or without the binary, the tests skip visibly.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))

try:
    import ctranslate2
    import sentencepiece  # noqa: F401  (rpt_to_ctranslate2.tokenizers imports it late)
    import rpt_to_ctranslate2
    MISSING = None
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"ctranslate2 and sentencepiece (tools/setup.sh) are needed ({e})"
    print(f"rpt_to_ctranslate2_test: SKIPPED: {MISSING}", file=sys.stderr)

RPT_TRANSLATE = os.environ.get("RPT_TRANSLATE") or os.path.join(REPO, "build", "cli",
                                                                  "rpt-translate")
MAX_LENGTH = 250

# UI strings of the kind the bundled models were trained on, short and long, placeholders too.
SENTENCES = [
    "Open file", "Save the file as %s", "%d files were copied to %s.", "Print preview",
    "Are you sure you want to quit without saving your changes?", "Cancel", "Close the window",
    "Delete the selected files?", "Could not open %s: %s", "The printer is out of paper.",
    "Show hidden files", "Downloading %d of %d packages", "Undo", "Select all",
    "Your password has expired. Please choose a new one.", "Connecting to %s...",
    "The file %s already exists. Do you want to replace it?", "Check for updates automatically",
    "Remove the account %s and all its settings?", "Import contacts from a file",
]


def rpt_translate(model_dir, lines):
    # One segment per line: the engines compared, not rpt's sentence splitting.
    out = subprocess.run([RPT_TRANSLATE, "--model", model_dir, "--split-sentences", "none",
                          "--no-protect-spans", "--beam-size", "1", "--max-length", str(MAX_LENGTH)],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def ct2_translate(model_dir, lines, work):
    ct2_dir = rpt_to_ctranslate2.convert(model_dir, os.path.join(work, "ct2"))
    translator = ctranslate2.Translator(ct2_dir, device="cpu", compute_type="float32")
    return rpt_to_ctranslate2.translate(translator, rpt_to_ctranslate2.tokenizers(model_dir),
                                        lines, beam_size=1, max_decoding_length=MAX_LENGTH)


def fixture_sentences(model_dir):
    with open(os.path.join(os.path.dirname(model_dir), "golden.json"), encoding="utf-8") as f:
        return [case["text"] for case in json.load(f)["cases"]]


def supported(model_dir):
    try:
        rpt_to_ctranslate2.check_supported(rpt_to_ctranslate2.rpt_model.read_config(model_dir))
        return True
    except rpt_to_ctranslate2.UnsupportedModel:
        return False


@unittest.skipIf(MISSING, MISSING)
class SameGreedyOutputsTest(unittest.TestCase):
    def setUp(self):
        if not os.access(RPT_TRANSLATE, os.X_OK):
            print(f"rpt_to_ctranslate2_test: SKIPPED: no rpt-translate at {RPT_TRANSLATE}",
                  file=sys.stderr)
            self.skipTest(f"no rpt-translate at {RPT_TRANSLATE} (build it or set RPT_TRANSLATE)")

    def assert_same(self, model_dir, lines):
        with tempfile.TemporaryDirectory() as work:
            ours, theirs = rpt_translate(model_dir, lines), ct2_translate(model_dir, lines, work)
        self.assertEqual(len(ours), len(lines))
        different = [(s, a, b) for s, a, b in zip(lines, ours, theirs) if a != b]
        self.assertEqual(different, [], f"{model_dir}: (source, rpt, CTranslate2)")

    def test_bundled_models(self):
        models = sorted(glob.glob(os.path.join(REPO, "models", "*", "config.json")))
        self.assertTrue(models, "no bundled model under models/")
        for config in models:
            with self.subTest(model=os.path.basename(os.path.dirname(config))):
                self.assert_same(os.path.dirname(config), SENTENCES)

    def test_fixtures(self):
        fixtures = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*", "model")))
        checked = [d for d in fixtures if supported(d)]
        self.assertGreaterEqual(len(checked), 3, "relative, tied/biased and sinusoidal fixtures")
        for model_dir in checked:
            with self.subTest(fixture=os.path.basename(os.path.dirname(model_dir))):
                self.assert_same(model_dir, fixture_sentences(model_dir))


@unittest.skipIf(MISSING, MISSING)
class RefusalTest(unittest.TestCase):
    def test_t5_buckets_are_named(self):
        model_dir = os.path.join(REPO, "tests", "fixtures", "t5_bucket", "model")
        with self.assertRaisesRegex(rpt_to_ctranslate2.UnsupportedModel, "t5_bucket"):
            rpt_to_ctranslate2.build_spec(model_dir)

    def test_embedding_scale_without_sinusoids(self):
        config = rpt_to_ctranslate2.rpt_model.read_config(os.path.join(REPO, "models", "en-fr"))
        config["architecture"]["embedding_scale"] = True
        with self.assertRaisesRegex(rpt_to_ctranslate2.UnsupportedModel, "embedding_scale"):
            rpt_to_ctranslate2.check_supported(config)


if __name__ == "__main__":
    unittest.main()
