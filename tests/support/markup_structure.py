#!/usr/bin/env python3
"""Compares the markup structure of a document and its translation (tests/cli/cli_test.sh).

    markup_structure.py html SOURCE TRANSLATION
    markup_structure.py xml SOURCE TRANSLATION

Exit 0 when TRANSLATION has the same tags as SOURCE, in the same order and nesting, with the
same attributes (the values of the translatable HTML attributes title, alt, placeholder,
aria-label aside, and the root <html>'s lang, which names the translation's language), and the content of untouched elements (HTML: script, style, code, pre,
textarea; translate="no" anywhere) byte for byte; only other text may differ. XML must also be
well-formed (xml.dom.minidom parses it; a fragment is parsed inside a root of the test's own).
Otherwise prints the first difference and exits 1. Standard library only.
"""
import html.parser
import sys
import xml.dom.minidom

TRANSLATABLE = {"title", "alt", "placeholder", "aria-label"}
UNTOUCHED_HTML = {"script", "style", "code", "pre", "textarea", "kbd", "samp"}
VOID_HTML = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


class HtmlEvents(html.parser.HTMLParser):
    """Tags, comments and untouched text as a list of strings."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events = []
        self.open = []  # (tag, untouched) of the elements open

    def untouched(self):
        return any(untouched for _, untouched in self.open)

    def handle_starttag(self, tag, attrs):
        # The root's language declaration names the translation's language (rpt sets it).
        changing = TRANSLATABLE | ({"lang", "xml:lang"} if tag == "html" else set())
        kept = [(name, None if name in changing else value) for name, value in attrs]
        self.events.append(f"<{tag} {sorted(kept, key=lambda a: a[0])}>")
        if tag not in VOID_HTML:
            untouched = tag in UNTOUCHED_HTML or ("translate", "no") in attrs
            self.open.append((tag, untouched))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID_HTML:
            return
        self.events.append(f"</{tag}>")
        if self.open and self.open[-1][0] == tag:
            self.open.pop()

    def handle_data(self, data):
        if self.untouched():
            self.events.append(f"untouched[{data}]")

    def handle_comment(self, data):
        self.events.append(f"comment[{data}]")

    def handle_decl(self, decl):  # libxml2 writes the doctype with its own spacing
        self.events.append(f"decl[{''.join(decl.lower().split())}]")


def html_events(text):
    parser = HtmlEvents()
    parser.feed(text)
    parser.close()
    return parser.events


def xml_events(text):
    try:
        document = xml.dom.minidom.parseString(text.encode("utf-8"))
    except Exception:  # a fragment: siblings or text without a single root
        document = xml.dom.minidom.parseString(
            ("<test-root>" + text + "</test-root>").encode("utf-8"))
    events = []

    def walk(node, untouched):
        for child in node.childNodes:
            if child.nodeType == child.ELEMENT_NODE:
                attrs = sorted(child.attributes.items())
                events.append(f"<{child.tagName} {attrs}>")
                walk(child, untouched or child.getAttribute("translate") == "no")
                events.append(f"</{child.tagName}>")
            elif child.nodeType in (child.TEXT_NODE, child.CDATA_SECTION_NODE):
                if untouched or child.nodeType == child.CDATA_SECTION_NODE:
                    events.append(f"untouched[{child.data}]")
            elif child.nodeType == child.COMMENT_NODE:
                events.append(f"comment[{child.data}]")
            elif child.nodeType == child.PROCESSING_INSTRUCTION_NODE:
                events.append(f"pi[{child.target} {child.data}]")

    walk(document, False)
    return events


def main():
    kind, source_path, translation_path = sys.argv[1:4]
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    with open(translation_path, encoding="utf-8") as f:
        translation = f.read()
    events = html_events if kind == "html" else xml_events
    try:
        expected, actual = events(source), events(translation)
    except Exception as error:  # noqa: BLE001 - any parse failure is the test's failure
        print(f"markup_structure: {translation_path}: {error}")
        return 1
    for index, (want, got) in enumerate(zip(expected, actual)):
        if want != got:
            print(f"markup_structure: event {index}: expected {want!r}, got {got!r}")
            return 1
    if len(expected) != len(actual):
        print(f"markup_structure: {len(expected)} events expected, {len(actual)} found")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
