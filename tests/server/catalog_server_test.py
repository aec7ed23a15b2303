"""Localization files through the real rpt-server (docs/localization.md), over gRPC and JSON:
a PO catalogue sent with format po comes back filled in, valid for `msgfmt --check`, each entry
translated exactly as its msgid alone is, untouched entries as msgcat prints them; XLIFF 1.2 and
2.0 get their targets; a broken file is INVALID_ARGUMENT naming the text and gettext's line.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/catalog_server_test.py
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

from rpt_server import REPO, GrpcTranslator, ServerProcess

MODEL = os.path.join(REPO, "models", "en-de")
FIXTURES = os.path.join(REPO, "tests", "fixtures", "catalogs")
CATALOG = os.path.join(FIXTURES, "app.po")


def msgfmt(po_text, *arguments):
    with tempfile.NamedTemporaryFile("w", suffix=".po", encoding="utf-8") as file:
        file.write(po_text)
        file.flush()
        run = subprocess.run(["msgfmt", *arguments, "-o", "/dev/null", file.name],
                             capture_output=True, text=True)
    return run.returncode, run.stderr


def msgstr_of(po_text, msgid):
    """The msgstr of the entry whose msgid is the one-line `msgid` (gettext's own layout)."""
    match = re.search(r'\nmsgid "' + re.escape(msgid) + r'"\nmsgstr ((?:".*"\n)+)', po_text)
    return "".join(re.findall(r'"(.*)"', match.group(1))) if match else None


class CatalogServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={MODEL}"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)
        with open(CATALOG, encoding="utf-8") as file:
            cls.catalog = file.read()

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def test_a_po_catalogue_is_filled_in_and_passes_msgfmt_check(self):
        reply = self.grpc.translate("en-de", [self.catalog], format=self.grpc.pb.TEXT_FORMAT_PO)
        po = reply.translations[0].hypotheses[0].text
        code, errors = msgfmt(po, "--check")
        self.assertEqual(code, 0, errors + po)
        self.assertIn('"Language: de\\n"', po)
        self.assertIn('"Plural-Forms: nplurals=2; plural=(n != 1);\\n"', po)
        self.assertIn('msgid "Quit"\nmsgstr "Beenden"', po)  # translated before: kept
        self.assertIn('#~ msgid "Obsolete entry"', po)
        code, statistics = msgfmt(po, "--statistics")
        self.assertIn("1 translated message, 11 fuzzy translations", statistics)
        # The same file over JSON, byte for byte.
        status, _, body = self.server.translate({"texts": [self.catalog],
                                                 "options": {"format": "po"}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["translations"][0]["hypotheses"][0]["text"], po)

    def test_each_entry_is_translated_as_its_msgid_alone(self):
        reply = self.grpc.translate("en-de", [self.catalog], format=self.grpc.pb.TEXT_FORMAT_PO)
        po = reply.translations[0].hypotheses[0].text
        msgids = ["Open the settings", "The file %s could not be saved."]
        alone = self.grpc.translate("en-de", msgids)
        for msgid, translation in zip(msgids, alone.translations):
            self.assertEqual(msgstr_of(po, msgid), translation.hypotheses[0].text)
        self.assertEqual(reply.translations[0].segments, 15)

    def test_review_marks_are_an_option(self):
        status, _, body = self.server.translate(
            {"texts": [self.catalog],
             "options": {"format": "po", "mark_for_review": False, "translate_fuzzy": True}})
        self.assertEqual(status, 200, body)
        po = body["translations"][0]["hypotheses"][0]["text"]
        code, statistics = msgfmt(po, "--statistics")
        self.assertEqual(code, 0, statistics)
        self.assertIn("12 translated messages.", statistics)

    def test_xliff_files_get_their_targets(self):
        files = []
        for name in ("app-1.2.xlf", "app-2.0.xlf"):
            with open(os.path.join(FIXTURES, name), encoding="utf-8") as file:
                files.append(file.read())
        reply = self.grpc.translate("en-de", files, format=self.grpc.pb.TEXT_FORMAT_XLIFF)
        status, _, body = self.server.translate({"texts": files, "options": {"format": "xliff"}})
        self.assertEqual(status, 200, body)
        for i, translation in enumerate(reply.translations):
            xliff = translation.hypotheses[0].text
            self.assertEqual(body["translations"][i]["hypotheses"][0]["text"], xliff)
            with tempfile.NamedTemporaryFile("w", suffix=".xlf", encoding="utf-8") as file:
                file.write(xliff)
                file.flush()
                lint = subprocess.run(["xmllint", "--noout", "--nonet", file.name],
                                      capture_output=True, text=True)
            self.assertEqual(lint.returncode, 0, lint.stderr)
        version_12 = reply.translations[0].hypotheses[0].text
        self.assertIn('target-language="de"', version_12)
        alone = self.grpc.translate("en-de", ["Open file"]).translations[0].hypotheses[0].text
        self.assertIn(f'<target xml:lang="de" state="needs-review-translation">{alone}</target>',
                      version_12)
        self.assertIn("<target>Auf Wiedersehen.</target>", version_12)  # translated before
        self.assertNotIn("MIT Lizenz", version_12)  # translate="no"
        self.assertIn('trgLang="de"', reply.translations[1].hypotheses[0].text)
        self.assertIn('state="initial"', reply.translations[1].hypotheses[0].text)

    def test_json_resource_files_come_back_in_the_target_language(self):
        resources = json.dumps({
            "app": {"title": "Open file", "items_other": "{{count}} files"},
            "files": {"defaultMessage": "{count, plural, one {One file} other {You have # files}}",
                      "description": "Number of files"},
            "@@locale": "en", "@title": {"description": "The window title"},
        }, indent=2) + "\n"
        reply = self.grpc.translate("en-de", [resources], format=self.grpc.pb.TEXT_FORMAT_JSON)
        translated = reply.translations[0].hypotheses[0].text
        status, _, body = self.server.translate({"texts": [resources],
                                                 "options": {"format": "json"}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["translations"][0]["hypotheses"][0]["text"], translated)
        self.assertTrue(translated.endswith("}\n"), translated)
        out = json.loads(translated)
        alone = self.grpc.translate("en-de", ["Open file", "{{count}} files", "One file",
                                             "You have # files"])
        words = [t.hypotheses[0].text for t in alone.translations]
        self.assertEqual(out["app"]["title"], words[0])
        self.assertEqual(out["app"]["items_other"], words[1])
        # An ICU message: each case translated as its text alone, the syntax kept.
        self.assertEqual(out["files"]["defaultMessage"],
                         f"{{count, plural, one {{{words[2]}}} other {{{words[3]}}}}}")
        self.assertIn(" # ", words[3])
        self.assertNotIn("files", words[3])
        self.assertEqual(out["files"]["description"], "Number of files")
        self.assertEqual(out["@@locale"], "de")
        self.assertEqual(out["@title"], {"description": "The window title"})
        with self.assertRaises(self.grpc.grpc.RpcError) as raised:
            self.grpc.translate("en-de", ['{"a": "x",}'], format=self.grpc.pb.TEXT_FORMAT_JSON)
        self.assertEqual(raised.exception.code(), self.grpc.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("line 1, column 11", raised.exception.details())

    def test_a_broken_catalogue_is_invalid_argument_with_its_line(self):
        broken = 'msgid "a"\nmsgstr ""\n\nmsgid "unterminated\nmsgstr ""\n'
        with self.assertRaises(self.grpc.grpc.RpcError) as raised:
            self.grpc.translate("en-de", [self.catalog, broken],
                                format=self.grpc.pb.TEXT_FORMAT_PO)
        self.assertEqual(raised.exception.code(), self.grpc.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("texts[1] is not a valid po file", raised.exception.details())
        self.assertIn("line 5: end-of-line within string", raised.exception.details())
        status, _, body = self.server.translate({"texts": [broken], "options": {"format": "po"}})
        self.assertEqual(status, 400, body)
        # The server still serves.
        self.assertEqual(len(self.grpc.translate("en-de", ["Fine."]).translations), 1)


if __name__ == "__main__":
    unittest.main()
