#include "documents/segmenter.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "documents/bracket_pairs.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

SegmentedText segment(std::string_view text, SplitSentences split = SplitSentences::kAuto) {
  return segment_text(text, {.split = split, .language = "en", .keep_together = {}});
}

// Every segmentation gives its text back byte for byte when nothing is translated.
void expect_round_trip(std::string_view text, SplitSentences split) {
  const SegmentedText s = segment(text, split);
  ASSERT_EQ(s.separators.size(), s.segments.size() + 1);
  EXPECT_EQ(join_segments(s, s.segments), text) << split_sentences_name(split);
}

TEST(Segmenter, ParagraphIsCutIntoItsSentences) {
  const SegmentedText s = segment(
      "The file could not be saved. Check that the disk is not full and try again. If the "
      "problem persists, contact your administrator.");
  EXPECT_EQ(s.segments, (Strings{"The file could not be saved.",
                                 "Check that the disk is not full and try again.",
                                 "If the problem persists, contact your administrator."}));
  EXPECT_EQ(s.separators, (Strings{"", " ", " ", ""}));
}

TEST(Segmenter, LayoutAroundSegmentsIsKept) {
  const std::string text = "  Saved.  Open it?\r\n\r\n\t- Done\xC2\xA0\n   1. First step\n";
  const SegmentedText s = segment(text);
  EXPECT_EQ(s.segments, (Strings{"Saved.", "Open it?", "Done", "First step"}));
  EXPECT_EQ(s.separators, (Strings{"  ", "  ", "\r\n\r\n\t- ", "\xC2\xA0\n   1. ", "\n"}));
  EXPECT_EQ(join_segments(s, {"A", "B", "C", "D"}), "  A  B\r\n\r\n\t- C\xC2\xA0\n   1. D\n");
}

// A heading's section number is layout: the demo models stopped after it ("2.1 The Basics" came
// back as "2.1"). Numbers that belong to the sentence stay in it.
TEST(Segmenter, SectionNumbersOpeningAHeadingAreLayout) {
  for (const auto& [text, number, rest] :
       std::vector<std::array<std::string, 3>>{{"2.1 The Basics", "2.1 ", "The Basics"},
                                               {"1.2.3. Scope of \xC3\x9C"
                                                "bersicht",
                                                "1.2.3. ",
                                                "Scope of \xC3\x9C"
                                                "bersicht"},
                                               {"10.4\t\xC3\x9C"
                                                "ber uns",
                                                "10.4\t",
                                                "\xC3\x9C"
                                                "ber uns"}}) {
    const SegmentedText s = segment(text);
    EXPECT_EQ(s.segments, Strings{rest}) << text;
    EXPECT_EQ(s.separators, (Strings{number, ""})) << text;
  }
  for (const std::string sentence :
       {"2.5 times faster", "2024 Annual Report", "1.2.3.4x Foo", "3.14 is pi", "v2.1 Notes"}) {
    const SegmentedText s = segment(sentence);
    ASSERT_FALSE(s.segments.empty()) << sentence;
    EXPECT_EQ(s.separators.front(), "") << sentence;
  }
}

// After markup at a segment's start a section number is layout as at a line's start, and a
// number alone ends no sentence: valgrind's "<a name=\"manual-intro\"/>1.\u00A0Introduction" was
// the segments "1." and "Introduction", "<a href=\"manual-core.html\">2. Using ...</a>" gave the
// model its number.
TEST(Segmenter, NumbersAfterMarkupAtASegmentsStartAreLayout) {
  const SegmentedText anchor = segment("<a name=\"intro\"/>1.\u00A0Introduction");
  EXPECT_EQ(anchor.segments, Strings{"Introduction"});
  EXPECT_EQ(anchor.separators, (Strings{"<a name=\"intro\"/>1.\u00A0", ""}));
  // A DocBook section number before a no-break space (valgrind's "1.1.&#160;An Overview").
  const SegmentedText section =
      segment("<a name=\"x\"/>1.1.\u00A0An Overview\n2.1\u00A0The Basics");
  EXPECT_EQ(section.segments, (Strings{"An Overview", "The Basics"}));
  EXPECT_EQ(section.separators, (Strings{"<a name=\"x\"/>1.1.\u00A0", "\n2.1\u00A0", ""}));
  const SegmentedText link = segment("<a href=\"c.html\">2. Using the core</a>");
  EXPECT_EQ(link.segments, Strings{"Using the core"});
  EXPECT_EQ(link.separators, (Strings{"<a href=\"c.html\">2. ", "</a>"}));
  // A number the words need, or inside the line, stays in its sentence.
  EXPECT_EQ(segment("<b>3.</b> Save it.").segments, Strings{"<b>3.</b> Save it."});
  EXPECT_EQ(segment("Open it. 2. Save it. Use version 2. Then quit.").segments,
            (Strings{"Open it.", "2. Save it.", "Use version 2.", "Then quit."}));
}

// A --help text's option column is layout: given "-I   equivalent to --binary-files=without-match"
// (grep's catalogue), en-de translated the option and lost the column ("-I Suffix-files=mit
// --binary-Datei").
TEST(Segmenter, OptionColumnsOfHelpTextsAreLayout) {
  const SegmentedText s = segment(
      "  -I                        equivalent to --binary-files=without-match\n"
      "  -d, --directories=ACTION  how to handle directories;\n"
      "                            ACTION is 'read' or 'skip'\n"
      "      --color[=WHEN],\n"
      "  -e script, --expression=script\n"
      "                 add the script\n");
  EXPECT_EQ(s.segments,
            (Strings{"equivalent to --binary-files=without-match", "how to handle directories;",
                     "ACTION is 'read' or 'skip'", "add the script"}));
  EXPECT_EQ(s.separators,
            (Strings{"  -I                        ", "\n  -d, --directories=ACTION  ",
                     "\n                            ",
                     "\n      --color[=WHEN],\n  -e script, --expression=script\n                 ",
                     "\n"}));
  // Not options: a negative number in a sentence, a list item, a dash (a symbol).
  EXPECT_EQ(segment("-5 degrees is cold\n- item one\n-- see below").segments,
            (Strings{"-5 degrees is cold", "item one", "see below"}));
}

// A term of syntax and its description, as date's and diff's --help list format directives and
// metavariables: the term is layout (en-de wrote "%[-][VREC]][.[PREC]] printf-Stil{doxX}LETTER"
// and "Spaltennummer" for "F  first line number").
TEST(Segmenter, SyntaxTermColumnsOfHelpTextsAreLayout) {
  const SegmentedText s = segment(
      "  %%   a literal %\n"
      "  %a   locale's abbreviated weekday name (e.g., Sun)\n"
      "  %[-][WIDTH][.[PREC]]{doxX}LETTER  printf-style spec for LETTER\n"
      "      F  first line number\n"
      "  GTYPE  input group type\n"
      "%c'C'  the single character C\n");
  EXPECT_EQ(s.segments, (Strings{"a literal %", "locale's abbreviated weekday name (e.g., Sun)",
                                 "printf-style spec for LETTER", "first line number",
                                 "input group type", "the single character C"}));
  EXPECT_EQ(s.separators, (Strings{"  %%   ", "\n  %a   ", "\n  %[-][WIDTH][.[PREC]]{doxX}LETTER  ",
                                   "\n      F  ", "\n  GTYPE  ", "\n%c'C'  ", "\n"}));
  // Prose: a word and two blanks at a line's start, one blank after a directive, a name not
  // indented, a term with nothing after it.
  EXPECT_EQ(segment("Note:  read this\n%s was saved\nFILE  is missing\n  %d  ").segments,
            (Strings{"Note:  read this", "%s was saved", "FILE  is missing"}));
}

// A code block's lines are layout (documents/markdown_blocks.h): given a README, the demo models
// rewrote its commands and turned the fence "```sh" into "»inline«".
TEST(Segmenter, FencedCodeBlocksAreLayout) {
  const std::string readme =
      "Run this:\n\n```sh\npip install --upgrade example\nexport PATH=$HOME/bin:$PATH\n```\n\n"
      "Then open the file.\n~~~\nSave it\n~~~\n";
  for (const SplitSentences split : {SplitSentences::kAuto, SplitSentences::kSentences}) {
    const SegmentedText s = segment(readme, split);
    EXPECT_EQ(s.segments, (Strings{"Run this:", "Then open the file."}));
    EXPECT_EQ(s.separators[1],
              "\n\n```sh\npip install --upgrade example\nexport PATH=$HOME/bin:$PATH\n```\n\n");
    expect_round_trip(readme, split);
  }
  // In a list item and a quotation, with CRLF line breaks; a block with no code but its info
  // string; an unclosed fence runs to the end, as CommonMark reads it.
  EXPECT_EQ(segment("- Install it:\r\n  ```\r\n  make install\r\n  ```\r\n- Done.").segments,
            (Strings{"Install it:", "Done."}));
  EXPECT_EQ(segment("> Quote\n> ```js\n> let x = 1;\n> ```\nAfter").segments,
            (Strings{"Quote", "After"}));
  EXPECT_EQ(segment("Before\n```python\n```\nAfter").segments, (Strings{"Before", "After"}));
  EXPECT_EQ(segment("Before\n```\nrun it\nand this").segments, Strings{"Before"});
  // Not code: backticks inside a line, inline code, fewer than three.
  EXPECT_EQ(segment("Type ``` to open a block.\n``Open`` it\n`` not a fence").segments,
            (Strings{"Type ``` to open a block.", "``Open`` it", "not a fence"}));
}

// Four blanks of indentation are code only in a Markdown document: in plain text they are a --help
// text's or a letter's layout.
TEST(Segmenter, IndentedCodeBlocksAreLayoutInMarkdown) {
  const std::string text = "Example:\n\n    make install\n    make check\n\nDone.";
  EXPECT_EQ(segment(text).segments, (Strings{"Example:", "make install", "make check", "Done."}));
  const SegmentedText markdown = segment_text(text, {.keep_together = {}, .markdown = true});
  EXPECT_EQ(markdown.segments, (Strings{"Example:", "Done."}));
  EXPECT_EQ(markdown.separators[1], "\n\n    make install\n    make check\n\n");
}

// In a Markdown document a paragraph (or list item) wrapped over lines is one block, cut at its
// sentences only: read line by line, "... installed and if" and "so, builds ..." reached the
// model apart. Items, headings, quotation lines and hard breaks stay apart.
TEST(Segmenter, MarkdownParagraphsWrappedOverLinesAreOneBlock) {
  const std::string text =
      "Checks whether it is installed and if\nso, builds it. Then stop.\n\n"
      "* For more, see the\n  [home page](https://example.com).\n- one\n- two\n\n"
      "## Heading\nText after it.\n> quoted\n> more\n\nA hard break  \nhere.\n";
  const SegmentedText s = segment_text(text, {.keep_together = {}, .markdown = true});
  EXPECT_EQ(s.segments,
            (Strings{"Checks whether it is installed and if\nso, builds it.", "Then stop.",
                     "For more, see the\n  [home page](https://example.com).", "one", "two",
                     "Heading", "Text after it.", "quoted", "more", "A hard break", "here."}));
  EXPECT_EQ(join_segments(s, s.segments), text);
  // A line without words of its own (a man page's option term) stays apart from its paragraph.
  EXPECT_EQ(segment_text("**--debug, -D**\nShow more.\nAnd this.",
                         {.keep_together = {}, .markdown = true})
                .segments,
            (Strings{"Show more.", "And this."}));
  // A document's front matter is layout: Jekyll's and Hugo's keys.
  for (const std::string front :
       {"---\ntitle: Notes\nlayout: default\n---\n", "+++\r\ntitle = \"Notes\"\r\n+++\r\n"}) {
    const SegmentedText page =
        segment_text(front + "\nSave it.\n", {.keep_together = {}, .markdown = true});
    EXPECT_EQ(page.segments, Strings{"Save it."}) << front;
    EXPECT_EQ(page.separators.front(), front + "\n");
  }
  // Newlines mode keeps to lines; plain text keeps its line breaks.
  EXPECT_EQ(segment_text(
                text, {.split = SplitSentences::kNewlines, .keep_together = {}, .markdown = true})
                .segments.front(),
            "Checks whether it is installed and if");
  EXPECT_EQ(segment(text).segments.front(), "Checks whether it is installed and if");
}

// A Markdown table is read cell by cell, its pipes and delimiter row layout: read as one
// paragraph, its rows were joined and the demo models garbled them ("Quietsmodus| Quiet, Keine").
TEST(Segmenter, MarkdownTablesAreReadCellByCell) {
  const std::string text =
      "| Option | Description |\n|---|:--:|\n| `-q` | Quiet mode, print nothing. |\n"
      "| **Name** |  |\nName | No pipes at the edges\n\nAfter the table.\n";
  const SegmentedText s = segment_text(text, {.keep_together = {}, .markdown = true});
  EXPECT_EQ(s.segments, (Strings{"Option", "Description", "Quiet mode, print nothing.", "Name",
                                 "Name", "No pipes at the edges", "After the table."}));
  EXPECT_EQ(join_segments(s, s.segments), text);
  EXPECT_EQ(s.separators[2], " |\n|---|:--:|\n| `-q` | ");
  // In plain text a table is lines of text.
  EXPECT_EQ(segment(text).segments.front(), "Option | Description");
}

// A Markdown document's link reference definitions are layout: the models rewrote their
// destinations ("faq.md" came back as "Faq.md"). A line of text that looks like one is text, and
// so are definitions in plain text, where "[Error]: disk full" is a message.
TEST(Segmenter, MarkdownLinkReferenceDefinitionsAreLayout) {
  const std::string text =
      "Read the [user guide][guide] and\nthe [FAQ][] first.\n\n"
      "[guide]: https://example.org/guide \"The guide\"\n  [FAQ]: faq.md\n\n"
      "[Note]: not a definition, a paragraph.\n";
  const SegmentedText s = segment_text(text, {.keep_together = {}, .markdown = true});
  EXPECT_EQ(s.segments, (Strings{"Read the [user guide][guide] and\nthe [FAQ][] first.",
                                 "[Note]: not a definition, a paragraph."}));
  EXPECT_EQ(join_segments(s, s.segments), text);
  EXPECT_EQ(segment("[Error]: disk full\n[Error]: https://example.org").segments,
            (Strings{"[Error]: disk full", "[Error]: https://example.org"}));
}

// HTML comments are layout: a block of their own in any text (Node.js's "<!-- YAML\nadded:
// v11.0.0\n-->", which the models garbled into "<!-111.0.0.0.0..."), and a comment at a
// segment's edge; one inside a sentence is a protected span.
TEST(Segmenter, HtmlCommentsAreLayout) {
  const std::string text =
      "<!-- introduced_in=v0.10.0 -->\n\nSave the file.\n<!-- YAML\nadded: v11.0.0\n-->\n"
      "Open <!-- why --> the file.\n```\n<!-- code -->\n```\n";
  for (const bool markdown : {false, true}) {
    const SegmentedText s = segment_text(text, {.keep_together = {}, .markdown = markdown});
    EXPECT_EQ(s.segments, (Strings{"Save the file.", "Open <!-- why --> the file."})) << markdown;
    EXPECT_EQ(join_segments(s, s.segments), text) << markdown;
  }
}

TEST(Segmenter, BlankTextsHaveNoSegment) {
  for (const std::string blank : {"", " ", "\n\n", "\t\r\n", "\xC2\xA0", "\xE3\x80\x80"}) {
    const SegmentedText s = segment(blank);
    EXPECT_TRUE(s.segments.empty()) << blank;
    EXPECT_EQ(s.separators, Strings{blank});
  }
}

TEST(Segmenter, SymbolsAloneAreLayout) {
  const SegmentedText s = segment("\xE2\x9C\x93 Done. \xF0\x9F\x98\x80\n***\nSaved \xE2\x9C\x93\n");
  EXPECT_EQ(s.segments, (Strings{"Done.", "Saved"}));
  EXPECT_EQ(segment("Saved.  - ").separators, (Strings{"", "  - "}));
  EXPECT_EQ(s.separators,
            (Strings{"\xE2\x9C\x93 ", " \xF0\x9F\x98\x80\n***\n", " \xE2\x9C\x93\n"}));
  // Placeholders, tags and entities alone have nothing to translate either.
  EXPECT_TRUE(segment("%s: {0}\n<br/> &amp;").segments.empty());
  // A symbol inside a sentence stays in it (span protection keeps it, engine/span_protection.h).
  EXPECT_EQ(segment("Save \xE2\x9C\x93 the file").segments, Strings{"Save \xE2\x9C\x93 the file"});
}

// A markup unit writes '<' and '>' of its text as references: a page's navigation arrows are
// symbols like "\u2192" (valgrind's "&lt;&lt;\u00A0Valgrind User Manual" lost its no-break space
// to the model, and "... core &gt;&gt;" came back as "2. Mit dem Valgrind &gt;&gt; wird ...").
TEST(Segmenter, SymbolReferencesAloneAreLayout) {
  const SegmentedText s =
      segment("&lt;&lt;\u00A0Valgrind User Manual\nUsing the core &gt;&gt;\n&#8594; Next &#x2192;");
  EXPECT_EQ(s.segments, (Strings{"Valgrind User Manual", "Using the core", "Next"}));
  EXPECT_EQ(s.separators, (Strings{"&lt;&lt;\u00A0", "\n", " &gt;&gt;\n&#8594; ", " &#x2192;"}));
  // Not a symbol: a letter's reference, an ampersand, a reference inside a word.
  EXPECT_EQ(segment("&#65; note &amp; Save it&gt;&gt;").segments,
            Strings{"&#65; note &amp; Save it&gt;&gt;"});
}

TEST(Segmenter, DomainTextIsNotCutInsideItsTokens) {
  // Abbreviations, versions, file names, URLs, placeholders and tag pairs end no sentence.
  for (const std::string one :
       {"Use a tool, e.g. the file manager, to open it.", "Version 2.0.1 is installed.",
        "Open config.txt in an editor.", "See https://example.com/a.b?c=d. for details.",
        "Mr. Smith saved the file.", "Click <b>Save. Now</b> to continue.",
        "Saved %s. files to {0}.", "Copy config.txt.Bak and v1.2.3.Final files."}) {
    EXPECT_EQ(segment(one).segments, Strings{one});
  }
}

// An abbreviation written after a name ends the sentence before a capital: the demo model,
// given "Dr. Smith works at ACME Inc. He is the CEO." as one segment, dropped its second half.
TEST(Segmenter, ASentenceEndsAfterACompanyOrNameSuffix) {
  EXPECT_EQ(segment("Dr. Smith works at ACME Inc. He is the CEO.").segments,
            (Strings{"Dr. Smith works at ACME Inc.", "He is the CEO."}));
  EXPECT_EQ(segment("Made by Foo Ltd. Contact Foo Corp. Ask John Smith Jr. Thanks.").segments,
            (Strings{"Made by Foo Ltd.", "Contact Foo Corp.", "Ask John Smith Jr.", "Thanks."}));
  EXPECT_EQ(segment("Apple Inc. is big. Ask Mr. Smith.").segments,
            (Strings{"Apple Inc. is big.", "Ask Mr. Smith."}));
}

// Quotation marks or brackets around a whole segment are layout, like a tag pair around it:
// en-de gave "OpenDatei." for "Open the file." and dropped «Open the file.» to "▸ Datei. »«".
TEST(Segmenter, MarksAroundAWholeSegmentAreLayout) {
  const SegmentedText s = segment("\"Open the file,\" he said. \"Then save it.\"");
  EXPECT_EQ(s.segments, (Strings{"\"Open the file,\" he said.", "Then save it."}));
  EXPECT_EQ(s.separators, (Strings{"", " \"", "\""}));
  EXPECT_EQ(
      segment("(Optional)\n\u201EDatei \u00F6ffnen\u201C\n\u00AB ( Ouvrir ) \u00BB\n'Don't save.'\n"
              "\"Open\" or \"Save\"\n(see (a))\n\"%s\"")
          .segments,
      (Strings{"Optional", "Datei \u00F6ffnen", "Ouvrir", "'Don't save.'", "\"Open\" or \"Save\"",
               "(see (a))"}));
  expect_round_trip("\u00AB ( Ouvrir ) \u00BB \"Then save it.\" (x)", SplitSentences::kAuto);
  EXPECT_EQ(segment("\uFF08Optional\uFF09\n\u3010Open the file.\u3011").segments,
            (Strings{"Optional", "Open the file."}));
}

// No sentence ends inside a bracket pair closed in its paragraph: cut there, en-de gave "(siehe
// den Handbuch) Es gibt die Optionen.)" for "(see the manual. It explains the options.)".
TEST(Segmenter, NoSentenceEndsInsideABracketPair) {
  for (const std::string text :
       {"Read the notes (see the manual. It explains the options.) before you start.",
        "Read the notes [see the manual. It explains the options.] before you start.",
        "Read the notes (see [the manual. It] explains the options.) before you start.",
        "\u8BF7\u9605\u8BFB\uFF08\u89C1\u624B\u518C\u3002\u5B83\u89E3\u91CA\u9009\u9879"
        "\u3002\uFF09\u7136\u540E\u5F00\u59CB\u3002",
        "Read the notes \u3010see the manual. It explains the options.\u3011 before you start."}) {
    EXPECT_EQ(segment(text).segments, Strings{text}) << text;
  }
  // A pair standing where sentences stand is layout, its sentences cut as outside it (kept
  // whole, en-de gave "(Suchen Sie die manuelle Optionen.)" for "(See the manual. It explains
  // the options.)"); one that does not end a sentence inside holds its words together.
  const SegmentedText alone = segment("(See the manual. It explains them.) Then start.");
  EXPECT_EQ(alone.segments, (Strings{"See the manual.", "It explains them.", "Then start."}));
  EXPECT_EQ(alone.separators, (Strings{"(", " ", ") ", ""}));
  const SegmentedText after = segment("Saved. (Open it later. It stays here.) Then quit.");
  EXPECT_EQ(after.segments, (Strings{"Saved.", "Open it later.", "It stays here.", "Then quit."}));
  EXPECT_EQ(after.separators, (Strings{"", " (", " ", ") ", ""}));
  EXPECT_EQ(segment("Saved. (Open it later. It stays) here.").segments,
            (Strings{"Saved.", "(Open it later. It stays) here."}));
  // A paragraph holds a pair across its single line breaks; a line break still cuts in auto.
  EXPECT_EQ(segment("Read (the manual.\nIt explains.) now.", SplitSentences::kSentences).segments,
            Strings{"Read (the manual.\nIt explains.) now."});
  EXPECT_EQ(segment("Read (the manual.\nIt explains.) now.").segments,
            (Strings{"Read (the manual.", "It explains.) now."}));
}

// Quotation marks hold their sentences together like brackets: cut inside, en-fr opened the
// quotation with « and closed it with " ('He said: "Open the file. Then save it." and left.').
TEST(Segmenter, NoSentenceEndsInsideAQuotation) {
  for (const std::string text :
       {"He said: \"Open the file. Then save it.\" and left.",
        "He said: \u201COpen the file. Then save it.\u201D and left.",
        "Er sagte: \u201E\u00D6ffne die Datei. Speichere sie.\u201C und ging.",
        "Il a dit\u00A0: \u00AB\u00A0Ouvrez le fichier. Enregistrez-le.\u00A0\u00BB et il est "
        "parti.",
        "Er sagte: \u00BBDatei \u00F6ffnen. Dann speichern.\u00AB und ging.",
        "He said \u2018Open the file. Don\u2019t save it.\u2019 and left.",
        "\"Open the file. Then save it.\" he said."}) {
    EXPECT_EQ(segment(text).segments, Strings{text}) << text;
    expect_round_trip(text, SplitSentences::kAuto);
  }
  // Standing where sentences stand, the marks are layout and the sentences inside are cut.
  const SegmentedText alone = segment("\"Open the file. Then save it.\" Done.");
  EXPECT_EQ(alone.segments, (Strings{"Open the file.", "Then save it.", "Done."}));
  EXPECT_EQ(alone.separators, (Strings{"\"", " ", "\" ", ""}));
  EXPECT_EQ(segment("Saved. \u00AB\u00A0Ouvrez-le. Puis quittez.\u00A0\u00BB").segments,
            (Strings{"Saved.", "Ouvrez-le.", "Puis quittez."}));
  // Apostrophes, inches and a quotation mark never closed hold nothing together.
  EXPECT_EQ(segment("Don\u2019t open the file. It\u2019s big.").segments,
            (Strings{"Don\u2019t open the file.", "It\u2019s big."}));
  EXPECT_EQ(segment("Get the 5\" screen. Then \"x\" it. Done.").segments,
            (Strings{"Get the 5\" screen.", "Then \"x\" it.", "Done."}));
  EXPECT_EQ(segment("He said: \"Open the file. Then save it. Done.").segments,
            (Strings{"He said: \"Open the file.", "Then save it.", "Done."}));
}

// An opening bracket never closed, a closing one never opened, one inside a placeholder and a
// pair longer than kMaxKeptBracketBytes hold nothing together: the rest of the paragraph is cut
// as before.
TEST(Segmenter, UnbalancedOrLongBracketsHoldNothingTogether) {
  EXPECT_EQ(
      segment("Read the notes (see the manual. It explains the options. Then start.").segments,
      (Strings{"Read the notes (see the manual.", "It explains the options.", "Then start."}));
  EXPECT_EQ(segment("Pick a) red. B) blue. Then start.").segments,
            (Strings{"Pick a) red.", "B) blue.", "Then start."}));
  EXPECT_EQ(segment("Open (the %(name)s file. Then save it. Done.").segments,
            (Strings{"Open (the %(name)s file.", "Then save it.", "Done."}));
  std::string inside;
  while (inside.size() < kMaxKeptBracketBytes) inside += "Open the file. ";
  const SegmentedText s = segment("Read (" + inside + "Then save it.) Done.");
  EXPECT_GT(s.segments.size(), 3u);
  EXPECT_EQ(s.segments.front(), "Read (Open the file.");
  // Marks that never pair cost no look back over one another (quadratic, this took minutes).
  const std::string unpaired = std::string(200000, '(') + std::string(200000, ']');
  EXPECT_TRUE(bracket_pairs(unpaired).empty());
  const std::string nested =
      std::string(100000, '[') + "(" + std::string(100000, '(') + std::string(100000, ']');
  // The first ']' passes over the '(' once and closes them with its '['; each next ']' pairs at
  // once.
  EXPECT_EQ(bracket_pairs(nested, nested.size()).size(), 100000u);
}

TEST(Segmenter, ASentenceEndsBeforeATagAfterAPlaceholderAndAfterCapitals) {
  EXPECT_EQ(segment("Open the file. <b>Save</b> it now. %s files saved.").segments,
            (Strings{"Open the file.", "<b>Save</b> it now.", "%s files saved."}));
  EXPECT_EQ(segment("She was born on %(birth_date)s. Gramps had a problem.").segments,
            (Strings{"She was born on %(birth_date)s.", "Gramps had a problem."}));
  EXPECT_EQ(segment("Press OK. Export as PDF. Open the admin. Done.").segments,
            (Strings{"Press OK.", "Export as PDF.", "Open the admin.", "Done."}));
}

TEST(Segmenter, ASentenceEndsBeforeATagRightAfterIt) {
  const SegmentedText s = segment("Open the file.<img src=\"a.png\"/>Save the file.");
  EXPECT_EQ(s.segments, (Strings{"Open the file.", "Save the file."}));
  EXPECT_EQ(s.separators, (Strings{"", "<img src=\"a.png\"/>", ""}));
  EXPECT_EQ(segment("Open the file.<b>Save</b> it now!<x id=\"1\"/>Quit.").segments,
            (Strings{"Open the file.", "<b>Save</b> it now!", "Quit."}));
  // Not where the full stop is no sentence's end.
  EXPECT_EQ(segment("Use a tool, e.g.<b>rpt</b>, to open it.").segments,
            Strings{"Use a tool, e.g.<b>rpt</b>, to open it."});
}

// A text written as its layout in brackets around its segments: "[<br/> ]Open[]" is the text
// "<br/> Open", its separators {"<br/> ", ""} and segments {"Open"}.
SegmentedText bracketed(std::string_view written, std::string* text) {
  SegmentedText out;
  for (std::size_t at = 0; at < written.size();) {
    const std::size_t open = written.find('[', at);
    const std::size_t close = written.find(']', open);
    if (open > at) out.segments.emplace_back(written.substr(at, open - at));
    out.separators.emplace_back(written.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  *text = join_segments(out, out.segments);
  return out;
}

// What a model would drop or repeat (a tag alone, a comment's placeholder) stays outside the
// segment, with the blank beside it; what the words need (a tag pair inside) stays in.
TEST(Segmenter, MarkupAtASegmentsEdgeIsLayout) {
  for (const std::string written :
       {"[<br/> ]Open the file[]", "[]Open the file.[<x id=\"1\"/>]",
        "[<img src=\"a.png\"/> ]Quit[]", "[<x id=\"1\"/> <br/>]Quit[ <x id=\"2\"/>]",
        "[<b>]Open the file[</b>]", "[<a href=\"x\"> <i>]Open[</i> </a>]",
        "[]<b>Warning:</b> the disk is full[]", "[]Click <img src=\"a.png\"/> to open the file[]",
        "[]<b>Save</b> or <i>quit</i>[]", "[**]Open the file[**]",
        "[]**Warning:** the disk is full[]"}) {
    std::string text;
    const SegmentedText expected = bracketed(written, &text);
    for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kNewlines,
                                 SplitSentences::kSentences, SplitSentences::kNone}) {
      const SegmentedText s = segment(text, split);
      EXPECT_EQ(s.segments, expected.segments) << text << " " << split_sentences_name(split);
      EXPECT_EQ(s.separators, expected.separators) << text << " " << split_sentences_name(split);
    }
  }
}

// A reference at a sentence's edge (marks around one tag pair, set off by blank) is a segment of
// its own, its marks, tags and the blank before it layout: read in the sentence, en-fr gave "Voir
// également [<a href=\"i.html\">Index</a>]]" and the no-break space came back as a space.
TEST(Segmenter, AReferenceAtASentencesEdgeIsASegmentOfItsOwn) {
  struct Case {
    std::string text;
    Strings segments;
    Strings separators;
  };
  for (const Case& c : std::vector<Case>{
           {"See also\u00A0 [<a href=\"i.html\">Index</a>]",
            {"See also", "Index"},
            {"", "\u00A0 [<a href=\"i.html\">", "</a>]"}},
           {"(<b>Beta</b>) Open the file.", {"Beta", "Open the file."}, {"(<b>", "</b>) ", ""}},
           {"Open the file \uFF08<a href=\"x\">Help</a>\uFF09",
            {"Open the file", "Help"},
            {"", " \uFF08<a href=\"x\">", "</a>\uFF09"}},
           // Not a reference: quoted (what the sentence speaks of), inside the sentence, no tag
           // pair, more than it, no blank before.
           {"Click \u201C<b>Save</b>\u201D", {"Click \u201C<b>Save</b>\u201D"}, {"", ""}},
           {"See [<a href=\"i.html\">Index</a>] now",
            {"See [<a href=\"i.html\">Index</a>] now"},
            {"", ""}},
           {"See also [Index]", {"See also [Index]"}, {"", ""}},
           {"See also [<a href=\"i.html\">Index</a> page]",
            {"See also [<a href=\"i.html\">Index</a> page]"},
            {"", ""}},
           {"See also[<a href=\"i.html\">Index</a>]",
            {"See also[<a href=\"i.html\">Index</a>]"},
            {"", ""}}}) {
    for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kSentences}) {
      const SegmentedText s = segment(c.text, split);
      EXPECT_EQ(s.segments, c.segments) << c.text << " " << split_sentences_name(split);
      EXPECT_EQ(s.separators, c.separators) << c.text << " " << split_sentences_name(split);
    }
  }
  // One segment per text where the caller asks for it.
  EXPECT_EQ(segment("See also [<a href=\"i.html\">Index</a>]", SplitSentences::kNone).segments,
            Strings{"See also [<a href=\"i.html\">Index</a>]"});
}

// A Markdown image at a segment's edge is layout as <img/> is: the demo models stopped after it
// ("![logo](img.png) Welcome to the app." came back as "![logo](img.png)").
TEST(Segmenter, MarkdownImageAtASegmentsEdgeIsLayout) {
  for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kNewlines,
                               SplitSentences::kSentences, SplitSentences::kNone}) {
    const std::string mode = split_sentences_name(split);
    const SegmentedText leading = segment("![logo](img.png) Welcome to the app.", split);
    EXPECT_EQ(leading.segments, Strings{"Welcome to the app."}) << mode;
    EXPECT_EQ(leading.separators, (Strings{"![logo](img.png) ", ""})) << mode;
    const SegmentedText trailing = segment("Welcome to the app. ![logo](img.png)", split);
    EXPECT_EQ(trailing.segments, Strings{"Welcome to the app."}) << mode;
    EXPECT_EQ(trailing.separators, (Strings{"", " ![logo](img.png)"})) << mode;
    // Inside, the words need it. A link around all of a segment is a tag pair around it; a
    // badge (an image in a link) at an edge is layout whole.
    EXPECT_EQ(segment("Click ![icon](a.png) to open the file", split).segments,
              Strings{"Click ![icon](a.png) to open the file"})
        << mode;
    const SegmentedText link = segment("[Read the manual](setup.md)", split);
    EXPECT_EQ(link.segments, Strings{"Read the manual"}) << mode;
    EXPECT_EQ(link.separators, (Strings{"[", "](setup.md)"})) << mode;
    const SegmentedText badge =
        segment("[![CI](https://ci.example.org/b.svg)](https://ci.example.org) Fast.", split);
    EXPECT_EQ(badge.segments, Strings{"Fast."}) << mode;
    EXPECT_EQ(badge.separators,
              (Strings{"[![CI](https://ci.example.org/b.svg)](https://ci.example.org) ", ""}))
        << mode;
    // A pair around a placeholder or an address is part of the sentence.
    EXPECT_EQ(segment("<b>%s</b> files were saved.", split).segments,
              Strings{"<b>%s</b> files were saved."})
        << mode;
    EXPECT_EQ(segment("[example.org](https://example.org) is our site.", split).segments,
              Strings{"[example.org](https://example.org) is our site."})
        << mode;
  }
}

// Peeling markup off a segment's edges is linear however deep it nests: each pair's test for
// words inside was a walk over them, and a megabyte of nested tags took minutes.
TEST(Segmenter, EdgeMarkupIsPeeledInLinearTime) {
  std::string nest;
  for (int i = 0; i < 50000; ++i) nest += "<b>";
  nest += "x";
  for (int i = 0; i < 50000; ++i) nest += "</b>";
  const auto start = std::chrono::steady_clock::now();
  const SegmentedText s = segment(nest, SplitSentences::kNone);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.segments, Strings{"x"});
  EXPECT_EQ(join_segments(s, s.segments), nest);
}

// Span protection off: markup is text the model reads, at the edges too.
TEST(Segmenter, EdgeMarkupStaysInTheSegmentWhenItIsText) {
  SegmentationOptions options;
  options.edge_markup_is_layout = false;
  const SegmentedText s = segment_text("<b>Open the file</b> <br/>", options);
  EXPECT_EQ(s.segments, (Strings{"<b>Open the file</b> <br/>"}));
  options.split = SplitSentences::kNone;
  EXPECT_EQ(segment_text("<br/> Quit", options).segments, (Strings{"<br/> Quit"}));
}

TEST(Segmenter, KeepsTogetherWhatTheCallerSays) {
  const std::string text = "Ask Acme Labs. Cloud. Then wait.";
  EXPECT_EQ(segment(text).segments, (Strings{"Ask Acme Labs.", "Cloud.", "Then wait."}));
  SegmentationOptions options;
  options.keep_together = [](std::string_view line) {
    const std::size_t at = line.find("Labs. Cloud");
    return std::vector<std::pair<std::size_t, std::size_t>>{{at, at + 11}};
  };
  EXPECT_EQ(segment_text(text, options).segments, (Strings{"Ask Acme Labs. Cloud.", "Then wait."}));
}

TEST(Segmenter, ModesCutWhereTheySay) {
  const std::string text = "One. Two\nthree.\n\nFour.";
  EXPECT_EQ(segment(text, SplitSentences::kAuto).segments,
            (Strings{"One.", "Two", "three.", "Four."}));
  EXPECT_EQ(segment(text, SplitSentences::kNewlines).segments,
            (Strings{"One. Two", "three.", "Four."}));
  EXPECT_EQ(segment(text, SplitSentences::kSentences).segments,
            (Strings{"One.", "Two\nthree.", "Four."}));
  EXPECT_EQ(segment(text, SplitSentences::kNone).segments, Strings{"One. Two\nthree.\n\nFour."});
  for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kNewlines,
                               SplitSentences::kSentences, SplitSentences::kNone}) {
    expect_round_trip(text, split);
  }
}

TEST(Segmenter, ParsesItsOptionNames) {
  for (const char* name : {"auto", "newlines", "sentences", "none"}) {
    EXPECT_STREQ(split_sentences_name(parse_split_sentences(name)), name);
  }
  EXPECT_THROW(parse_split_sentences("0"), std::invalid_argument);
}

TEST(Segmenter, JoinChecksTheCount) {
  EXPECT_THROW(join_segments(segment("One. Two."), {"Eins."}), std::invalid_argument);
}

TEST(Segmenter, LongSegmentsAreCutAtAClauseThenABlank) {
  // The clause mark goes to the layout with its blank: a model given "file," may repeat or drop
  // the comma, and a list its separators.
  SegmentedText s = segment("Open the file, then save it as %s and close the window.");
  ASSERT_TRUE(cut_segment(s, 0));
  EXPECT_EQ(s.segments, (Strings{"Open the file", "then save it as %s and close the window."}));
  EXPECT_EQ(s.separators, (Strings{"", ", ", ""}));
  ASSERT_TRUE(cut_segment(s, 1));
  EXPECT_EQ(s.segments, (Strings{"Open the file", "then save it as %s", "and close the window."}));
  EXPECT_EQ(join_segments(s, s.segments),
            "Open the file, then save it as %s and close the window.");
  SegmentedText cjk = segment("\xE6\x96\x87\xE4\xBB\xB6\xE5\xB7\xB2\xE4\xBF\x9D\xE5\xAD\x98");
  ASSERT_TRUE(cut_segment(cjk, 0));  // no blank: at a code point boundary
  EXPECT_EQ(cjk.segments.size(), 2u);
  EXPECT_EQ(cjk.separators, (Strings{"", "", ""}));
  // ... but not between words only, where it stays whole.
  SegmentedText word = segment("\xE6\x96\x87\xE4\xBB\xB6\xE5\xB7\xB2\xE4\xBF\x9D\xE5\xAD\x98");
  EXPECT_FALSE(cut_segment(word, 0, {}, CutPlaces::kBetweenWords));
  EXPECT_EQ(word.segments.size(), 1u);
  // A full-width clause mark needs no blank after it; "1,000" and "a:b" are no clauses.
  SegmentedText listed = segment("\xE7\xBA\xA2\xE8\x89\xB2\xEF\xBC\x8C\xE7\xBB\xBF\xE8\x89\xB2");
  ASSERT_TRUE(cut_segment(listed, 0, {}, CutPlaces::kBetweenWords));
  EXPECT_EQ(listed.segments, (Strings{"\xE7\xBA\xA2\xE8\x89\xB2", "\xE7\xBB\xBF\xE8\x89\xB2"}));
  EXPECT_EQ(listed.separators, (Strings{"", "\xEF\xBC\x8C", ""}));
  SegmentedText numbers = segment("Copied 1,000 files to a:b now");
  ASSERT_TRUE(cut_segment(numbers, 0, {}, CutPlaces::kBetweenWords));
  EXPECT_EQ(numbers.separators[1], " ");
  // A list: at the separator nearest the middle, kept in the layout.
  SegmentedText list = segment("red, green; blue, black");
  ASSERT_TRUE(cut_segment(list, 0, {}, CutPlaces::kBetweenWords));
  EXPECT_EQ(list.segments, (Strings{"red, green", "blue, black"}));
  EXPECT_EQ(list.separators, (Strings{"", "; ", ""}));
  // Or at every one: a list item by item; none in "1,000" or "a:b", and only marks with kClauses.
  SegmentedText items = segment("red, green; blue, black");
  EXPECT_EQ(cut_at_clauses(items, 0), 4u);
  EXPECT_EQ(items.segments, (Strings{"red", "green", "blue", "black"}));
  EXPECT_EQ(items.separators, (Strings{"", ", ", "; ", ", ", ""}));
  // Outside brackets first: inside only when there is no clause mark outside.
  SegmentedText outer = segment("Pick one (for example, 1, 2 or 3), then save, and quit");
  EXPECT_EQ(cut_at_clauses(outer, 0), 3u);
  EXPECT_EQ(outer.segments,
            (Strings{"Pick one (for example, 1, 2 or 3)", "then save", "and quit"}));
  SegmentedText inner = segment("Pick one (for example, 1, 2 or 3)");
  EXPECT_EQ(cut_at_clauses(inner, 0), 3u);
  EXPECT_EQ(inner.segments, (Strings{"Pick one (for example", "1", "2 or 3)"}));
  SegmentedText none = segment("Copied 1,000 files to a:b now");
  EXPECT_EQ(cut_at_clauses(none, 0), 1u);
  EXPECT_FALSE(cut_segment(none, 0, {}, CutPlaces::kClauses));
  EXPECT_EQ(none.segments.size(), 1u);
  // Never inside a term the caller keeps together: the blank nearest the middle is in it.
  SegmentedText term = segment("Open the Acme Cloud Console now");
  const KeepTogether keep = [](std::string_view text) {
    const std::size_t at = text.find("Acme Cloud Console");
    return std::vector<std::pair<std::size_t, std::size_t>>{{at, at + 18}};
  };
  ASSERT_TRUE(cut_segment(term, 0, keep));
  EXPECT_EQ(term.segments, (Strings{"Open the", "Acme Cloud Console now"}));
  SegmentedText one = segment("x");
  EXPECT_FALSE(cut_segment(one, 0));
  SegmentedText tags = segment("Save <b>all files</b> now");  // a tag pair is cut around
  ASSERT_TRUE(cut_segment(tags, 0));
  EXPECT_TRUE(tags.segments[0] == "Save" || tags.segments[1] == "now") << tags.segments[0];
  SegmentedText paragraph = segment("<p>Save all files</p>");  // or inside, if it is all
  ASSERT_TRUE(cut_segment(paragraph, 0));
  EXPECT_EQ(paragraph.segments.size(), 2u);
  // Brackets and quotations likewise: the clause nearest the middle is inside the pair, so the
  // cut is at the blank outside it; inside only when the pair is all there is.
  SegmentedText bracketed = segment("Open the settings (colours, fonts and sizes) of the window");
  ASSERT_TRUE(cut_segment(bracketed, 0));
  EXPECT_EQ(bracketed.segments,
            (Strings{"Open the settings", "(colours, fonts and sizes) of the window"}));
  SegmentedText quoted = segment("He said \u201Cred, green and blue\u201D and left");
  ASSERT_TRUE(cut_segment(quoted, 0));
  EXPECT_EQ(quoted.segments, (Strings{"He said \u201Cred, green and blue\u201D", "and left"}));
  SegmentedText all = segment("x (red, green) y");
  ASSERT_TRUE(cut_segment(all, 0, {}, CutPlaces::kClauses));
  EXPECT_EQ(all.segments, (Strings{"x (red", "green) y"}));
}

TEST(Segmenter, RandomTextRoundTrips) {
  // Pieces chosen to hit every rule: breaks of every kind, blanks, markers, spans, symbols.
  const Strings pieces = {"Save",     " ",
                          "the file", ".",
                          "?",        "!",
                          "\n",       "\r\n",
                          "\r",       "\t",
                          "\xC2\xA0", "\xE2\x80\xA8",
                          "- ",       "1. ",
                          "(a) ",     "## ",
                          "%s",       "<b>",
                          "</b>",     "{0}",
                          "e.g.",     "\xF0\x9F\x98\x80",
                          "...",      "\xE3\x80\x82",
                          "Datei",    "\xE2\x80\xA2 ",
                          "  ",       "\f",
                          "x"};
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int count = static_cast<int>(random() % 24);
    for (int i = 0; i < count; ++i) text += pieces[random() % pieces.size()];
    for (SplitSentences split : {SplitSentences::kAuto, SplitSentences::kNewlines,
                                 SplitSentences::kSentences, SplitSentences::kNone}) {
      const SegmentedText s = segment(text, split);
      ASSERT_EQ(join_segments(s, s.segments), text) << text;
      SegmentedText cut = s;
      for (std::size_t i = 0; i < cut.segments.size(); ++i) {
        if (cut.segments[i].size() > 8) cut_segment(cut, i);
      }
      ASSERT_EQ(join_segments(cut, cut.segments), text) << text;
      for (const std::string& one : cut.segments) {
        EXPECT_FALSE(one.empty());
        EXPECT_NE(one.front(), ' ');
        EXPECT_NE(one.back(), ' ');
      }
    }
  }
}

}  // namespace
}  // namespace rpt::documents
