"""Texts and documents through the real rpt-server (docs/documents.md), over gRPC and JSON:
paragraphs with hostile whitespace come back with their layout byte for byte and each sentence
translated as it is alone; a 20,000-word text is one call; segments are cache entries;
TranslateStream sends each text once, whole; HTML keeps its tree and its untouched elements; XML
that is not well-formed is INVALID_ARGUMENT; a segment too long to translate whole (a list of 150
items) is cut at its separators, which come back as they were.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/documents_server_test.py
"""
import os
import random
import unittest

from rpt_server import FIXTURE_MODEL, REPO, GrpcTranslator, ServerProcess

SENTENCES = ["Save the file.", "Open a new window.", "The file could not be opened.",
             "Check that the disk is not full and try again!", "Do you want to quit?",
             "Remove the account %s and all its settings.", "Click <b>Save</b> to continue."]
# Separators and edges a user's text has: CRLF, tabs, NBSP, blank lines, bullets, indentation.
SEPARATORS = [" ", "  ", "\t", "\n", "\r\n", "\n\n", "\r\n\r\n", "\n- ", "\n  * ", "\n\u2022 ",
              "\u00a0", "\n\n1. ", "\n    "]
EDGES = ["", " ", "\n", "\t ", "\r\n\r\n", "\u3000", "  - "]


def paragraph(rng, count):
    """A text of `count` sentences with random separators: (text, separators, sentences)."""
    chosen = [rng.choice(SENTENCES) for _ in range(count)]
    separators = [rng.choice(EDGES)] + [rng.choice(SEPARATORS) for _ in range(count - 1)]
    separators.append(rng.choice(EDGES))
    return chosen, separators


def join(parts, separators):
    text = separators[0]
    for part, separator in zip(parts, separators[1:]):
        text += part + separator
    return text


class DocumentsServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--beam-size", "2",
                                    "--max-length", "12"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)
        reply = cls.grpc.translate("en-de", SENTENCES, use_cache=False)
        cls.alone = {s: t.hypotheses[0].text for s, t in zip(SENTENCES, reply.translations)}

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def both_protocols(self, text, grpc_format, json_format):
        """(protocol, (translation, segments)) of `text` in a format, over gRPC and JSON."""
        out = self.grpc.translate("en-de", [text], format=grpc_format).translations[0]
        yield "gRPC", (out.hypotheses[0].text, out.segments)
        status, _, body = self.server.translate({"texts": [text], "options": {"format": json_format}})
        self.assertEqual(status, 200, body)
        yield "JSON", (body["translations"][0]["hypotheses"][0]["text"],
                       body["translations"][0]["segments"])

    def test_paragraphs_keep_their_layout_byte_for_byte(self):
        rng = random.Random(3)
        cases = [paragraph(rng, rng.randint(1, 8)) for _ in range(40)]
        texts = [join(chosen, separators) for chosen, separators in cases]
        expected = [join([self.alone[s] for s in chosen], separators) for chosen, separators in cases]
        for start in range(0, len(texts), 8):
            batch = texts[start:start + 8]
            reply = self.grpc.translate("en-de", batch)
            status, _, body = self.server.translate({"texts": batch})
            self.assertEqual(status, 200, body)
            for i, text in enumerate(batch):
                with self.subTest(text=text):
                    want = expected[start + i]
                    self.assertEqual(reply.translations[i].hypotheses[0].text, want)
                    self.assertEqual(body["translations"][i]["hypotheses"][0]["text"], want)
                    self.assertEqual(reply.translations[i].segments,
                                     len(cases[start + i][0]))

    def test_a_twenty_thousand_word_text_is_one_call(self):
        rng = random.Random(5)
        paragraphs, words = [], 0
        while words < 20_000:
            chosen = [rng.choice(SENTENCES) for _ in range(rng.randint(1, 6))]
            words += sum(len(s.split()) for s in chosen)
            paragraphs.append(chosen)
        text = "\n\n".join(" ".join(p) for p in paragraphs)
        self.assertGreater(len(text.split()), 20_000)
        status, _, body = self.server.translate({"texts": [text]}, timeout=300)
        self.assertEqual(status, 200, body)
        got = body["translations"][0]
        self.assertEqual(got["segments"], sum(len(p) for p in paragraphs))
        self.assertEqual(got["hypotheses"][0]["text"],
                         "\n\n".join(" ".join(self.alone[s] for s in p) for p in paragraphs))

    def test_segments_are_cache_entries(self):
        sample = 'rpt_cache_hits_total{model="en-de"}'
        fresh = "Close all the windows now. Open the settings."
        self.grpc.translate("en-de", [fresh])  # stores both sentences
        hits = self.server.metric(sample) or 0.0
        reply = self.grpc.translate("en-de", ["  Open the settings.\n\nClose all the windows now."])
        self.assertEqual(self.server.metric(sample) - hits, 2)
        alone = self.grpc.translate("en-de", ["Open the settings.", "Close all the windows now."],
                                    use_cache=False)
        self.assertEqual(reply.translations[0].hypotheses[0].text,
                         "  " + alone.translations[0].hypotheses[0].text + "\n\n" +
                         alone.translations[1].hypotheses[0].text)

    def test_translate_stream_sends_each_text_once_and_whole(self):
        rng = random.Random(7)
        cases = [paragraph(rng, rng.randint(0, 5)) for _ in range(8)]
        texts = [join(chosen, separators) for chosen, separators in cases]
        unary = self.grpc.translate("en-de", texts)
        request = self.grpc.request("en-de", texts)
        import grpc  # noqa: F401 (the channel's module)
        stream = self.grpc.channel.unary_stream(
            "/rpt.v1.Translator/TranslateStream",
            request_serializer=self.grpc.pb.TranslateRequest.SerializeToString,
            response_deserializer=self.grpc.pb.TranslateStreamResponse.FromString)
        seen = {}
        for message in stream(request, timeout=60):
            self.assertNotIn(message.index, seen)
            seen[message.index] = message.translation.hypotheses[0].text
        self.assertEqual(seen, {i: t.hypotheses[0].text for i, t in enumerate(unary.translations)})

    def test_html_keeps_its_tree_and_untouched_elements(self):
        import lxml.html
        page = ("<!DOCTYPE html><html><head><title>Save the file.</title>"
                "<style>p { color: red; }</style></head><body>"
                "<h1>Open a new window.</h1><p>Save the file. <b>Do you want to quit?</b></p>"
                "<p translate=\"no\">Save the file.</p><p class=\"x notranslate\">Open it.</p>"
                "<script>var s = 'Save the file.';</script>"
                "<img src=\"a.png\" alt=\"Open a new window.\"><!-- Save the file. -->"
                "<ul><li>Do you want to quit?</li><li>Save &amp; quit.</li></ul></body></html>")
        for protocol, (text, segments) in self.both_protocols(page, 2, "html"):
            with self.subTest(protocol=protocol):
                self.assertGreaterEqual(segments, 7)

                def shape(html):
                    root = lxml.html.document_fromstring(html)
                    return [(e.tag, sorted((k, v) for k, v in e.attrib.items() if k != "alt"))
                            for e in root.iter() if isinstance(e.tag, str)]
                self.assertEqual(shape(text), shape(page))
                for kept in ("<style>p { color: red; }</style>",
                             "<script>var s = 'Save the file.';</script>",
                             "<p translate=\"no\">Save the file.</p>",
                             "<p class=\"x notranslate\">Open it.</p>",
                             "<!-- Save the file. -->"):
                    self.assertIn(kept, text)
                self.assertIn("<h1>" + self.alone["Open a new window."] + "</h1>", text)
                self.assertNotIn("<h1>Open a new window.</h1>", text)

    def test_markdown_keeps_its_code_blocks(self):
        fenced = "```sh\nSave the file.\nmake install\n```"
        indented = "    Open a new window.\n    make check"
        readme = ("# Save the file.\n\n" + fenced + "\n\nDo you want to quit?\n\n" + indented +
                  "\n\n- Open a new window.\n")
        for protocol, (text, segments) in self.both_protocols(readme, 7, "markdown"):
            with self.subTest(protocol=protocol):
                self.assertEqual(segments, 3)
                self.assertEqual(text, (
                    "# " + self.alone["Save the file."] + "\n\n" + fenced + "\n\n" +
                    self.alone["Do you want to quit?"] + "\n\n" + indented + "\n\n- " +
                    self.alone["Open a new window."] + "\n"))
        # As plain text, the fenced block is code too; the indented lines are prose.
        reply = self.grpc.translate("en-de", [readme]).translations[0]
        self.assertEqual(reply.segments, 5)
        self.assertIn(fenced, reply.hypotheses[0].text)

    def test_xml_must_be_well_formed(self):
        status, _, body = self.server.translate(
            {"texts": ["<doc><p>Save the file.</p>", "ok"], "options": {"format": "xml"}})
        self.assertEqual(status, 400, body)
        self.assertIn("texts[0] is not a valid xml document", body["error"]["message"])
        status, _, body = self.server.translate(
            {"texts": ["<doc><p>Save the file.</p><p>Open a new window.</p></doc>"],
             "options": {"format": "xml"}})
        self.assertEqual(status, 200, body)
        self.assertIn("<p>" + self.alone["Save the file."] + "</p>",
                      body["translations"][0]["hypotheses"][0]["text"])
    def test_a_long_list_is_translated_item_by_item(self):
        # Over half of max_length (never below 64 tokens: --max-length 12 here, and the fixture
        # model has no max_segment_tokens): cut at every separator, each item as it is alone.
        items = [SENTENCES[i % 5].rstrip(".!?") for i in range(40)]
        reply = self.grpc.translate("en-de", [", ".join(items)] + items[:5], use_cache=False)
        alone = [t.hypotheses[0].text for t in reply.translations[1:]]
        self.assertEqual(reply.translations[0].segments, 40)
        self.assertEqual(reply.translations[0].hypotheses[0].text,
                         ", ".join(alone[i % 5] for i in range(40)))


# The first-time user's list: 150 UI words in one line, no sentence end.
ITEMS = ("File Edit View Tools Help Save Open Close Print Copy Paste Cut Undo Redo Find Replace "
         "Settings Preferences Options Window Tabs Bookmarks History Downloads Extensions Themes "
         "Fonts Colors Layout Zoom Search Filter Sort Export Import Share Send Delete Rename Move "
         "Properties Details Preview Refresh Stop Back Forward Home Exit Quit Login Logout Account "
         "Profile Password Language Keyboard Mouse Display Sound Network Printer Battery Storage "
         "Memory Updates Security Privacy Notifications Calendar Contacts Messages Mail Photos "
         "Music Videos Documents Desktop Trash Folder Library Archive Backup Restore Sync Upload "
         "Download Install Uninstall Update Upgrade Reset Restart Shutdown Sleep Lock Unlock "
         "Connect Disconnect Enable Disable Start Pause Resume Cancel Apply Accept Decline Retry "
         "Skip Next Previous Finish Add Remove Insert Select Clear Duplicate Merge Split Group "
         "Ungroup Align Rotate Flip Crop Resize Scale Draw Erase Fill Brush Pencil Text Image Table "
         "Chart Link Comment Note Page Section Header Footer Title Subtitle Caption Label "
         "Status").split()


class LongSegmentsServerTest(unittest.TestCase):
    """The bundled en-de model (trained on UI strings, max_segment_tokens in its config.json)
    with the server's defaults (max_length 250): a long segment is cut between words before
    translation, its separators kept; a short sentence is one segment, as before."""

    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(["--model", f"en-de={os.path.join(REPO, 'models', 'en-de')}"])
        cls.grpc = GrpcTranslator(cls.server.grpc_port)

    @classmethod
    def tearDownClass(cls):
        cls.grpc.close()
        cls.server.close()

    def test_a_list_of_150_items_comes_back_with_150(self):
        self.assertEqual(len(ITEMS), 150)
        status, _, body = self.server.translate({"texts": [", ".join(ITEMS)] + ITEMS,
                                                 "options": {"use_cache": False}})
        self.assertEqual(status, 200, body)
        listed, alone = body["translations"][0], body["translations"][1:]
        self.assertEqual(listed["segments"], 150)  # was 1, and 31 to 57 items came back
        self.assertEqual(listed["hypotheses"][0]["text"],
                         ", ".join(t["hypotheses"][0]["text"] for t in alone))

    def test_a_long_sentence_is_cut_at_its_clauses_and_a_short_one_is_not(self):
        short = "Open the file, then save it and close the window."
        long = ("Open the file in the editor, change the settings of the document as you need "
                "them, save it under a new name in your home folder and close the window.")
        reply = self.grpc.translate("en-de", [short, long], use_cache=False)
        self.assertEqual(reply.translations[0].segments, 1)
        self.assertEqual(reply.translations[1].segments, 3)
        self.assertEqual(reply.translations[1].hypotheses[0].text.count(", "), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
