// Line breaks inside HTML and XML units: the source's wrapping (a space to the segmenter) or the
// text's own (verbatim elements, xml:space="preserve", an XLIFF unit's string).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "documents/document.h"

namespace rpt::documents {
namespace {

using Strings = std::vector<std::string>;

// A line break in an HTML unit's text is the page source's wrapping, a space to HTML: only
// sentence ends cut the unit (valgrind's manual-intro.html went to the model as "The <x id=\"1\"/>
// headers", "that you may wish to include in your code (eg.", ", etc.) are", ...).
TEST(MarkupDocument, HtmlLineBreaksInAUnitAreSpacesToTheSegmenter) {
  DocumentOptions options;
  options.format = TextFormat::kHtml;
  const Document document = Document::parse(
      "<p>Some of the <b>test</b> cases\n  are taken from a book.  They are\ndistributed under "
      "a BSD-style license.</p>",
      options);
  ASSERT_EQ(document.parts().size(), 1u);
  const SegmentedText& part = document.parts()[0];
  EXPECT_EQ(part.segments, (Strings{"Some of the <b>test</b> cases\n  are taken from a book.",
                                    "They are\ndistributed under a BSD-style license."}));
  EXPECT_EQ(part.separators, (Strings{"", "  ", ""}));
  // Where the caller asks for line breaks, they cut; plain text keeps its own rules.
  options.segmentation.split = SplitSentences::kNewlines;
  EXPECT_EQ(Document::parse("<p>Open\nthe file.</p>", options).parts()[0].segments,
            (Strings{"Open", "the file."}));
  options.format = TextFormat::kText;
  options.segmentation.split = SplitSentences::kAuto;
  EXPECT_EQ(Document::parse("Open\nthe file.", options).parts()[0].segments,
            (Strings{"Open", "the file."}));
}

// XML wraps its paragraphs too (DocBook, DITA): a line break in a unit is a space unless the
// element keeps its lines (verbatim elements, xml:space="preserve"); an XLIFF unit's line breaks
// are the string's own and still cut.
TEST(MarkupDocument, XmlLineBreaksAreSpacesButWhereTheMarkupKeepsItsLines) {
  DocumentOptions options;
  options.format = TextFormat::kXml;
  const Document document = Document::parse(
      "<article><para>Some of the <emphasis>test</emphasis> cases\n  are taken from a book."
      "</para><screen>Run the tool\nand wait.</screen><note xml:space=\"preserve\">First line\n"
      "second line</note><literallayout>Roses are red\nviolets are blue</literallayout></article>",
      options);
  ASSERT_EQ(document.parts().size(), 4u);
  EXPECT_EQ(document.parts()[0].segments,
            Strings{"Some of the <emphasis>test</emphasis> cases\n  are taken from a book."});
  EXPECT_EQ(document.parts()[1].segments, (Strings{"Run the tool", "and wait."}));
  EXPECT_EQ(document.parts()[2].segments, (Strings{"First line", "second line"}));
  EXPECT_EQ(document.parts()[3].segments, (Strings{"Roses are red", "violets are blue"}));

  options.format = TextFormat::kXliff;
  options.catalog.target_language = "de";
  const Document xliff = Document::parse(
      "<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\"><file "
      "source-language=\"en\" target-language=\"de\" datatype=\"plaintext\" original=\"a\"><body>"
      "<trans-unit id=\"1\"><source>Open <g id=\"1\">the</g>\nfile</source></trans-unit>"
      "</body></file></xliff>",
      options);
  ASSERT_EQ(xliff.parts().size(), 1u);
  EXPECT_EQ(xliff.parts()[0].segments, (Strings{"Open <g id=\"1\">the</g>", "file"}));
}

}  // namespace
}  // namespace rpt::documents
