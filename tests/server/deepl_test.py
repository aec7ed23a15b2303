"""DeepL's API on the real rpt-server (server/deepl_api.h), spoken to by DeepL's own Python
client (deepl from PyPI, as tools/setup.sh installs it, pointed at rpt with server_url) and by
hand in the shapes DeepL documents: form and JSON bodies, split_sentences, tag_handling,
ignore_tags, formality, languages, usage per key, glossaries created, used and deleted at run
time, and DeepL's errors (403 without a key, 400, 404, 413); and an omitted source_lang detected
among several sources into the target, on a server whose second model into German is en-de
declared as fr-de (tests/server/relabelled_model.py).

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/deepl_test.py
"""
import json
import os
import unittest
import urllib.parse

from relabelled_model import RelabelledModel
from rpt_server import REPO, model_arguments, ServerProcess

MODELS = {"en-de": os.path.join(REPO, "models", "en-de"),
          "en-fr": os.path.join(REPO, "models", "en-fr")}
KEY = {"Authorization": "DeepL-Auth-Key test-key:fx"}


class DeepLTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(model_arguments(MODELS) + ["--beam-size", "2", "--http-max-body-bytes", "65536"])
        cls.url = f"http://127.0.0.1:{cls.server.http_port}"

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def client(self, key="test-key:fx"):
        import deepl
        return deepl.Translator(key, server_url=self.url)

    def native(self, texts, model, **options):
        status, _, body = self.server.translate({"model": model, "texts": texts,
                                                 "options": options})
        self.assertEqual(status, 200, body)
        return [t["hypotheses"][0]["text"] for t in body["translations"]]

    def call(self, method, path, fields=None, as_json=False, headers=KEY):
        body, sent = None, dict(headers)
        if fields is not None:
            body = (json.dumps(fields) if as_json
                    else urllib.parse.urlencode(fields, doseq=True)).encode()
            sent["Content-Type"] = ("application/json" if as_json
                                    else "application/x-www-form-urlencoded")
        status, _, answer = self.server.request(method, path, body, sent)
        return status, json.loads(answer) if answer else None

    def test_the_deepl_client_translates_as_grpc_does(self):
        translator = self.client()
        text = "Save the file.  Open it again?"
        result = translator.translate_text(text, source_lang="EN", target_lang="DE")
        self.assertEqual(result.text, self.native([text], "en-de")[0])
        self.assertEqual(result.detected_source_lang, "EN")
        self.assertEqual(result.billed_characters, len(text))
        results = translator.translate_text(["Quit", "Open the file"], target_lang="FR")
        self.assertEqual([r.text for r in results], self.native(["Quit", "Open the file"], "en-fr"))
        html = "<p>Click <b>Save</b> to keep the file.</p>"
        tagged = translator.translate_text(html, target_lang="DE", tag_handling="html")
        self.assertEqual(tagged.text,
                         self.native([html], "en-de", format="html",
                                     split_sentences="sentences")[0])
        import deepl
        whole = translator.translate_text("Save the file. Quit.", target_lang="DE",
                                          split_sentences=deepl.SplitSentences.OFF)
        self.assertEqual(whole.text,
                         self.native(["Save the file. Quit."], "en-de", split_sentences="none")[0])
        with self.assertRaises(Exception) as raised:
            translator.translate_text("Quit", target_lang="DE", formality="more")
        self.assertIn("formality", str(raised.exception))
        translator.translate_text("Quit", target_lang="DE", formality="prefer_more")

    def test_a_bare_ampersand_in_xml_is_text(self):
        # DeepL reads "Tom & Jerry" in tag-handled XML as text; rpt answered 400.
        translator = self.client()
        text = "Tom & Jerry <b>live</b>"
        result = translator.translate_text(text, target_lang="DE", tag_handling="xml")
        self.assertEqual(result.text.count("&amp;"), 1, result.text)
        self.assertIn("<b>", result.text)
        self.assertIn("</b>", result.text)
        self.assertEqual(result.text,
                         self.native(["Tom &amp; Jerry <b>live</b>"], "en-de", format="xml",
                                     split_sentences="sentences")[0])

    # DeepL's tag_handling_version: v1 and v2 taken, any other value refused; with tag handling,
    # each translation names the version applied; v2 parses XML strictly, so what v1 reads as
    # text (a bare '&') is refused with DeepL's message. rpt took any value and ignored it.
    def test_tag_handling_version(self):
        import deepl
        translator = self.client()
        loose, strict = "Tom & Jerry <b>live</b>", "Tom &amp; Jerry <b>live</b>"
        want = self.native([strict], "en-de", format="xml", split_sentences="sentences")[0]
        for version in (None, "v1"):
            result = translator.translate_text(loose, target_lang="DE", tag_handling="xml",
                                               tag_handling_version=version)
            self.assertEqual(result.text, want)
        for text in (loose, "<p>This tag is not closed properly</a>"):
            with self.assertRaises(deepl.DeepLException) as raised:
                translator.translate_text(text, target_lang="DE", tag_handling="xml",
                                          tag_handling_version="v2")
            self.assertIn("Tag handling parsing failed, please check input.",
                          str(raised.exception))
        self.assertEqual(translator.translate_text(strict, target_lang="DE", tag_handling="xml",
                                                   tag_handling_version="v2").text, want)
        html = "<p>Tom & Jerry <b>live</p>"  # HTML is not parsed strictly by v2
        self.assertEqual(translator.translate_text(html, target_lang="DE", tag_handling="html",
                                                   tag_handling_version="v2").text,
                         self.native([html], "en-de", format="html",
                                     split_sentences="sentences")[0])
        with self.assertRaises(deepl.DeepLException) as raised:  # as a client without the option
            translator.translate_text("Quit", target_lang="DE",
                                      extra_body_parameters={"tag_handling_version": "v3"})
        self.assertIn("Value for 'tag_handling_version' not supported.", str(raised.exception))
        for as_json in (False, True):
            with self.subTest(as_json=as_json):
                fields = {"text": strict, "target_lang": "DE", "tag_handling": "xml"}
                for version, named in ((None, "v1"), ("v1", "v1"), ("v2", "v2")):
                    sent = fields if version is None else {**fields, "tag_handling_version": version}
                    status, answer = self.call("POST", "/v2/translate", sent, as_json)
                    self.assertEqual(status, 200, answer)
                    self.assertEqual(answer["translations"][0]["tag_handling_version"], named)
                status, answer = self.call("POST", "/v2/translate",
                                           {"text": "Quit", "target_lang": "DE",
                                            "tag_handling_version": "v2"}, as_json)
                self.assertEqual(status, 200, answer)
                self.assertNotIn("tag_handling_version", answer["translations"][0])
                for version in ("v3", "2"):
                    status, answer = self.call("POST", "/v2/translate",
                                               {**fields, "tag_handling_version": version},
                                               as_json)
                    self.assertEqual((status, answer), (400, {
                        "message": "Value for 'tag_handling_version' not supported."}))
                status, answer = self.call("POST", "/v2/translate",
                                           {**fields, "text": loose, "tag_handling_version": "v2"},
                                           as_json)
                self.assertEqual((status, answer), (400, {
                    "message": "Tag handling parsing failed, please check input."}))

    def test_languages_and_usage_per_key(self):
        translator = self.client("usage-key")
        self.assertEqual([(l.code, l.name) for l in translator.get_source_languages()],
                         [("EN", "English")])
        targets = translator.get_target_languages()
        self.assertEqual([(l.code, l.name, l.supports_formality) for l in targets],
                         [("DE", "German", False), ("FR", "French", False)])
        self.assertEqual(translator.get_usage().character.count, 0)
        translator.translate_text("Quit", target_lang="DE")
        translator.translate_text(["Save", "Open"], target_lang="FR")
        usage = translator.get_usage()
        self.assertEqual(usage.character.count, len("Quit") + len("Save") + len("Open"))
        self.assertFalse(usage.any_limit_reached)
        self.assertEqual(self.client("other-key").get_usage().character.count, 0)

    def test_glossaries_are_created_used_and_deleted(self):
        translator = self.client("glossary-key")
        glossary = translator.create_glossary("UI terms", source_lang="EN", target_lang="DE",
                                              entries={"file": "Akte", "window": "Fenster"})
        self.assertEqual(glossary.entry_count, 2)
        self.assertTrue(glossary.ready)
        self.assertEqual([g.glossary_id for g in translator.list_glossaries()],
                         [glossary.glossary_id])
        self.assertEqual(translator.get_glossary_entries(glossary),
                         {"file": "Akte", "window": "Fenster"})
        result = translator.translate_text("Save the file.", source_lang="EN", target_lang="DE",
                                           glossary=glossary)
        status, _, body = self.server.translate({
            "model": "en-de", "texts": ["Save the file."],
            "glossary": [{"source": "file", "target": "Akte"},
                         {"source": "window", "target": "Fenster"}]})
        self.assertEqual(result.text, body["translations"][0]["hypotheses"][0]["text"])
        self.assertIn("Akte", result.text)
        # Another key does not see it.
        self.assertEqual(self.client("someone-else").list_glossaries(), [])
        translator.delete_glossary(glossary)
        self.assertEqual(translator.list_glossaries(), [])
        import deepl
        with self.assertRaises(deepl.GlossaryNotFoundException):
            translator.get_glossary(glossary.glossary_id)

    def test_documents_are_uploaded_translated_and_downloaded_once(self):
        import io
        translator = self.client("document-key")
        cases = [("notes.txt", "Save the file.\n\nOpen it again?  Quit.\n", "text"),
                 ("page.html", "<html><body><p>Click <b>Save</b>.</p></body></html>", "html"),
                 ("README.md", "# Save\n\nRun:\n\n    make install\n\nThen quit.\n", "markdown")]
        with open(os.path.join(REPO, "tests", "fixtures", "catalogs", "app.po"),
                  encoding="utf-8") as file:
            cases.append(("app.po", file.read(), "po"))
        # A Trados file: its segments' empty target marks are filled.
        cases.append(("job.sdlxliff", (
            '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2"><file '
            'original="a.docx" source-language="en-US" target-language="de-DE" datatype="x">'
            '<body><trans-unit id="1"><source>Open the file. Quit.</source><seg-source>'
            '<mrk mtype="seg" mid="1">Open the file.</mrk> <mrk mtype="seg" mid="2">Quit.</mrk>'
            '</seg-source><target><mrk mtype="seg" mid="1"/> <mrk mtype="seg" mid="2"/></target>'
            '</trans-unit></body></file></xliff>'), "xliff"))
        for name, text, format_name in cases:
            with self.subTest(name=name):
                out = io.BytesIO()
                translator.translate_document(text.encode(), out, target_lang="DE",
                                              filename=name)
                self.assertEqual(out.getvalue().decode(),
                                 self.native([text], "en-de", format=format_name)[0])
                if name.endswith(".md"):
                    self.assertIn("\n\n    make install\n\n", out.getvalue().decode())
                if name.endswith(".sdlxliff"):
                    self.assertNotIn('mid="1"/>', out.getvalue().decode())
        self.assertEqual(translator.get_usage().character.count,
                         sum(len(text) for _, text, _ in cases))
        # By hand: the status, and a result that is gone once downloaded.
        status, _, body = self.server.request(
            "POST", "/v2/document",
            b"--BB\r\nContent-Disposition: form-data; name=\"target_lang\"\r\n\r\nDE\r\n"
            b"--BB\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            b"Content-Type: text/plain\r\n\r\nQuit\r\n--BB--\r\n",
            {**KEY, "Content-Type": "multipart/form-data; boundary=BB"})
        self.assertEqual(status, 200, body)
        handle = json.loads(body)
        for _ in range(500):
            status, state = self.call("POST", f"/v2/document/{handle['document_id']}",
                                      {"document_key": handle["document_key"]}, as_json=True)
            if state["status"] == "done":
                break
        self.assertEqual(state["status"], "done", state)
        self.assertEqual(state["billed_characters"], 4)
        path = f"/v2/document/{handle['document_id']}/result"
        status, _, body = self.server.request(
            "POST", path, json.dumps({"document_key": handle["document_key"]}),
            {**KEY, "Content-Type": "application/json"})
        self.assertEqual((status, body.decode()), (200, self.native(["Quit"], "en-de")[0]))
        status, _ = self.call("POST", path, {"document_key": handle["document_key"]})
        self.assertEqual(status, 404)
        status, answer = self.call("POST", f"/v2/document/{handle['document_id']}",
                                   {"document_key": "wrong"})
        self.assertEqual(status, 404, answer)
        with self.assertRaises(Exception) as raised:
            translator.translate_document(io.BytesIO(b"x"), io.BytesIO(), target_lang="DE",
                                          filename="slides.pptx")
        self.assertIn("Unsupported file type", str(raised.exception))

    def test_form_and_json_bodies_and_deepl_errors(self):
        fields = {"text": ["Quit", "Open the file"], "target_lang": "de",
                  "split_sentences": "nonewlines", "ignore_tags": "x,y"}
        form_status, form = self.call("POST", "/v2/translate", fields)
        json_status, as_json = self.call("POST", "/v2/translate", fields, as_json=True)
        self.assertEqual((form_status, json_status), (200, 200), (form, as_json))
        self.assertEqual(form, as_json)
        self.assertEqual([t["text"] for t in form["translations"]],
                         self.native(["Quit", "Open the file"], "en-de",
                                     split_sentences="sentences"))
        status, answer = self.call("POST", "/v2/translate", fields, headers={})
        self.assertEqual(status, 403)
        self.assertIn("DeepL-Auth-Key", answer["message"])
        status, answer = self.call("POST", "/v2/translate", {**fields, "auth_key": "legacy"},
                                   headers={})
        self.assertEqual(status, 200, answer)
        for bad, message in [({"target_lang": "de"}, "Parameter 'text' not specified."),
                             ({"text": "a"}, "Parameter 'target_lang' not specified."),
                             ({"text": "a", "target_lang": "JA"},
                              "Value for 'target_lang' not supported."),
                             ({"text": "a", "target_lang": "DE", "source_lang": "FR"},
                              "Value for 'source_lang' not supported."),
                             ({"text": "a", "target_lang": "DE", "tag_handling": "rtf"},
                              "Value for 'tag_handling' not supported."),
                             ({"text": "a", "target_lang": "DE", "split_sentences": "2"},
                              "Value for 'split_sentences' not supported."),
                             ({"text": "a", "target_lang": "DE", "glossary_id": "x"},
                              "requires the 'source_lang'")]:
            status, answer = self.call("POST", "/v2/translate", bad)
            self.assertEqual(status, 400, (bad, answer))
            self.assertIn(message, answer["message"])
        status, answer = self.call("POST", "/v2/translate",
                                   {"text": "a", "target_lang": "DE", "source_lang": "EN",
                                    "glossary_id": "nope"})
        self.assertEqual(status, 404, answer)
        status, answer = self.call("POST", "/v2/translate",
                                   {"text": "x" * 70000, "target_lang": "DE"})
        self.assertEqual(status, 413, answer)
        status, _, answer = self.server.request(
            "POST", "/v2/translate", b"not json", {**KEY, "Content-Type": "application/json"})
        self.assertEqual(status, 400, answer)
        status, answer = self.call("GET", "/v2/nothing", headers={})
        self.assertEqual(status, 404, answer)
        status, answer = self.call("POST", "/v2/glossaries",
                                   {"name": "bad", "source_lang": "en", "target_lang": "de",
                                    "entries": "no tab here", "entries_format": "tsv"})
        self.assertEqual(status, 400, answer)
        self.assertIn("line 1 is not source<TAB>target", answer["message"])
        status, answer = self.call("POST", "/v2/glossaries",
                                   {"name": "bad", "source_lang": "en", "target_lang": "de",
                                    "entries": "%s\tx", "entries_format": "tsv"})
        self.assertEqual(status, 400, answer)
        # The server still serves.
        self.assertEqual(self.client().translate_text("Quit", target_lang="DE").text,
                         self.native(["Quit"], "en-de")[0])


class DeepLDetectionTest(unittest.TestCase):
    """en-de and fr-de (en-de's weights: where a call goes is tested, not what it says)."""

    @classmethod
    def setUpClass(cls):
        cls.fr_de = RelabelledModel(MODELS["en-de"], "fr", "de")
        cls.server = ServerProcess(["--model", f"en-de={MODELS['en-de']}",
                                    "--model", f"fr-de={cls.fr_de.directory}",
                                    "--beam-size", "2"])
        cls.url = f"http://127.0.0.1:{cls.server.http_port}"

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        cls.fr_de.close()

    client = DeepLTest.client
    native = DeepLTest.native

    def test_an_omitted_source_lang_is_detected_among_the_sources_into_the_target(self):
        translator = self.client()
        self.assertEqual([l.code for l in translator.get_source_languages()], ["EN", "FR"])
        for text, code, model in (("Save the file before you close the window.", "EN", "en-de"),
                                  ("Enregistrer le fichier avant de fermer la fenêtre.", "FR",
                                   "fr-de")):
            with self.subTest(code=code):
                result = translator.translate_text(text, target_lang="DE")
                self.assertEqual(result.detected_source_lang, code)
                self.assertEqual(result.text, self.native([text], model)[0])
        # One source for the call, detected on all its texts.
        texts = ["Quitter", "Ouvrir le fichier", "Fermer toutes les fenêtres."]
        results = translator.translate_text(texts, target_lang="DE")
        self.assertEqual([r.detected_source_lang for r in results], ["FR"] * 3)
        self.assertEqual([r.text for r in results], self.native(texts, "fr-de"))
        # A named source_lang is taken as it is.
        named = translator.translate_text("Quitter", source_lang="EN", target_lang="DE")
        self.assertEqual((named.detected_source_lang, named.text),
                         ("EN", self.native(["Quitter"], "en-de")[0]))
        with self.assertRaises(Exception) as raised:
            translator.translate_text("Quitter", target_lang="FR")
        self.assertIn("target_lang", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
