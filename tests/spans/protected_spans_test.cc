// find_protected_spans: tables of text -> expected spans per family, the readings it must not
// make (prose percent signs, code braces, metavariables), malformed input, and the invariants
// on random text.
#include "spans/protected_spans.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "tests/spans/span_invariants.h"

namespace rpt {
namespace {

struct Expected {
  std::string text;
  SpanKind kind;
  int partner = -1;
};

struct Case {
  std::string input;
  std::vector<Expected> spans;
};

std::string describe(const std::string& text, const std::vector<ProtectedSpan>& spans) {
  std::string out = "in \"" + text + "\":";
  for (const ProtectedSpan& s : spans) {
    out.append(" [").append(text, s.begin, s.end - s.begin).append("|");
    out.append(span_kind_name(s.kind)).append("|").append(std::to_string(s.partner)).append("]");
  }
  return out;
}

void expect_spans(const Case& c, const SpanRecognitionOptions& options = {}) {
  const std::vector<ProtectedSpan> spans = find_protected_spans(c.input, options);
  const std::string found = describe(c.input, spans);
  ASSERT_EQ(spans.size(), c.spans.size()) << found;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(c.input.substr(spans[i].begin, spans[i].end - spans[i].begin), c.spans[i].text)
        << found;
    EXPECT_EQ(spans[i].kind, c.spans[i].kind) << found;
    EXPECT_EQ(spans[i].partner, c.spans[i].partner) << found;
  }
  EXPECT_EQ(check_span_invariants(c.input, spans), "") << found;
}

void expect_table(const std::vector<Case>& cases) {
  for (const Case& c : cases) expect_spans(c);
}

constexpr SpanKind P = SpanKind::kPrintf;
constexpr SpanKind Pct = SpanKind::kPercent;
constexpr SpanKind Pos = SpanKind::kPositional;
constexpr SpanKind Br = SpanKind::kBrace;
constexpr SpanKind Icu = SpanKind::kIcuMessage;
constexpr SpanKind V = SpanKind::kVariable;
constexpr SpanKind T = SpanKind::kTag;
constexpr SpanKind E = SpanKind::kEntity;
constexpr SpanKind Esc = SpanKind::kEscape;
constexpr SpanKind A = SpanKind::kAccelerator;
constexpr SpanKind Sym = SpanKind::kSymbol;
constexpr SpanKind U = SpanKind::kUrl;
constexpr SpanKind C = SpanKind::kCode;
constexpr SpanKind N = SpanKind::kNumber;
constexpr SpanKind Num = SpanKind::kPluralNumber;
constexpr SpanKind Lone = SpanKind::kLoneBracket;

// Web and mail addresses, with a scheme or without: hosts with a path or port, www., e-mail;
// the punctuation around them is not theirs; a tag that holds one wins (leftmost).
TEST(ProtectedSpans, Addresses) {
  expect_table({
      {"See example.com/a.b for details.", {{"example.com/a.b", U}}},
      {"Open https://example.com/find?q=%s&lang=de now",
       {{"https://example.com/find?q=%s&lang=de", U}}},
      {"Visit www.example.org.", {{"www.example.org", U}}},
      {"Mail user.name+tag@example.co.uk (or mailto:help@example.com).",
       {{"user.name+tag@example.co.uk", U}, {"mailto:help@example.com", U}}},
      {"(see https://en.wikipedia.org/wiki/Rust_(language))",
       {{"https://en.wikipedia.org/wiki/Rust_(language)", U}}},
      {"Go to example.com, rpt.dev or docs.example.de:8080/x: done",
       {{"example.com", U}, {"rpt.dev", U}, {"docs.example.de:8080/x", U}}},
      {"url=https://example.com/x and file:///tmp/a.txt",
       {{"https://example.com/x", U}, {"file:///tmp/a.txt", U}}},
      {"\"example.org/a\" and 'example.net/b'", {{"example.org/a", U}, {"example.net/b", U}}},
      {"<a href=\"https://example.com\">site</a>",
       {{"<a href=\"https://example.com\">", T, 1}, {"</a>", T, 0}}},
      {"example.com/a<b>x</b>", {{"example.com/a", U}, {"<b>", T, 2}, {"</b>", T, 1}}},
      {"&File at example.com/a?x=1&y=2", {{"&", A}, {"example.com/a?x=1&y=2", U}}},
      // A Markdown link md4c does not read as one (empty text): the destination, whatever it
      // names. Links and images are tag pairs (MarkdownLinksAndImages).
      {"See [](docs/setup.md) and ![](logo.png).", {{"docs/setup.md", U}, {"logo.png", U}}},
      // Angle brackets around a whole address are its own (autolinks); not around more.
      {"Written by Kirill <xi@example.net>. See <https://example.com/a>.",
       {{"<xi@example.net>", U}, {"<https://example.com/a>", U}}},
      {"<b>example.com</b> and <example.com/a and b>",
       {{"<b>", T, 2}, {"example.com", U}, {"</b>", T, 0}, {"example.com/a", U}}},
  });
}

// What looks like an address and is not: abbreviations, versions, file names, words joined by a
// dot or a slash, a printf conversion before an '@'.
TEST(ProtectedSpans, NotAddresses) {
  for (const char* text :
       {"e.g. this, i.e. that", "Save the file.Open it", "Version v1.2.3 or v1.5/2",
        "Edit config.txt and README.md", "Node.js and and/or", "LibreOffice was OpenOffice.org.",
        "file.open a.m./p.m. etc.", "@user", "Loading...", "x.y/z", "www.", "a@b"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    EXPECT_TRUE(spans.empty()) << describe(text, spans);
  }
  expect_spans({"%s@%s", {{"%s", P}, {"%s", P}}});
}

// Markdown's inline code is one span (the demo models turned "Run `make install` now." into
// "»make« installieren."), spans inside it part of it; GNU's `quotes' and a lone or unclosed
// backtick are not code.
TEST(ProtectedSpans, InlineCode) {
  expect_table({
      {"Run `make install` now.", {{"`make install`", C}}},
      {"Use `git commit -m \"%s\"` or ``a ` b``.",
       {{"`git commit -m \"%s\"`", C}, {"``a ` b``", C}}},
      {"Set `$HOME` and <b>`x`</b>", {{"`$HOME`", C}, {"<b>", T, 3}, {"`x`", C}, {"</b>", T, 1}}},
      {"Try `%s --help' for more, `a' or `b'.", {{"%s", P}, {"--help", C}}},
  });
  for (const char* text : {"a ` b", "` x`", "`x `", "``", "`a\nb`", "```code```", "``x`"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    EXPECT_TRUE(spans.empty()) << describe(text, spans);
  }
  // Longer than any inline code: not a span, and the scan stays linear.
  const std::string long_code = "`" + std::string(200, 'x') + "`";
  EXPECT_TRUE(find_protected_spans(long_code).empty());
}

// Command-line options named in prose are code (en-fr wrote "--directoriels=rectorescoriel" for
// "--directories=recurse"); a dash that opens no option word is text.
TEST(ProtectedSpans, CommandLineOptions) {
  expect_table({
      {"Use --directories=recurse to search every folder.", {{"--directories=recurse", C}}},
      {"cannot combine signal with -l or -t", {{"-l", C}, {"-t", C}}},
      {"Try -h/--help or [-a|--all]", {{"-h", C}, {"--help", C}, {"-a", C}, {"--all", C}}},
      {"--name requires --namespace argument", {{"--name", C}, {"--namespace", C}}},
      {"-r, -R, --recursive remove directories", {{"-r", C}, {"-R", C}, {"--recursive", C}}},
      {"Try 'e2fsck -f %s' or (--dry-run).", {{"-f", C}, {"%s", P}, {"--dry-run", C}}},
      {"--color[=WHEN] colors the output; --width=80.", {{"--color[=WHEN]", C}, {"--width=80", C}}},
      {"Set --format=%s or --url=https://example.com/x.",
       {{"--format=%s", C}, {"--url=https://example.com/x", C}}},
      {"Run “--help” or «-v» now", {{"--help", C}, {"-v", C}}},
      // A quoted value whole (its closing quote cut off, en-de lost it: --color='auto).
      {"plain --color means --color='auto'.", {{"--color", C}, {"--color='auto'", C}}},
      {"Use --format=\"%s\" or --x=\"\" here", {{"--format=\"%s\"", C}}},
      {"See `ls -l` and <b>--all</b>",
       {{"`ls -l`", C}, {"<b>", T, 3}, {"--all", C}, {"</b>", T, 1}}},
      // In Markdown's emphasis, as man pages in Markdown write them.
      {"**--debug, -D**", {{"**", T, 3}, {"--debug", C}, {"-D", C}, {"**", T, 0}}},
      {"Use *--all* now", {{"*", T, 2}, {"--all", C}, {"*", T, 0}}},
  });
  for (const char* text :
       {"yes -- no", "a--b", "e-mail and x-ray", "-5% off", "Use -rf here", "- item", "---", "--",
        "--1", "a-b -", "well-known --- fine", "x-- y", "-ish", "--foo-", "-"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    EXPECT_TRUE(spans.empty()) << describe(text, spans);
  }
}

// A bracket nothing pairs, with the syntax around it, is copied as written (the demo models
// closed "\(" as "\(n)" and repeated "[:" ten times); its prose punctuation and quotation marks
// are not its own. Pairs, intervals, words and placeholders around a bracket are not spans.
TEST(ProtectedSpans, LoneBrackets) {
  expect_table({
      {"Unmatched ( or \\(", {{"(", Lone}, {"\\(", Lone}}},
      {"Unmatched [, [^, [:, [., or [=",
       {{"[", Lone}, {"[^", Lone}, {"[:", Lone}, {"[.", Lone}, {"[=", Lone}}},
      {"missing ) after (?C or (?P", {{")", Lone}, {"(?C", Lone}, {"(?P", Lone}}},
      {"')' expected", {{")", Lone}}},
      {"Missing ).", {{")", Lone}}},
      {"To number \"1.)\", enter \".)\" here.", {{"1.)", Lone}, {".)", Lone}}},
      {"Choose: a) Red, b) Blue.", {{"a)", Lone}, {"b)", Lone}}},
      {"That was fun :-)", {{":-)", Lone}}},
      {"Unmatched \\{ after ( x )", {{"\\{", Lone}}},
      // The escaped pair is a pair; the plain bracket inside it is alone.
      {"Use \\( [ \\) here", {{"[", Lone}}},
      // The brackets inside a span are the span's.
      {"Expected %<(%> at %C", {{"%<(%>", P}, {"%C", P}}},
  });
  for (const char* text :
       {"Read the notes (see below) now.", "See [1] and [2].", "in [0, 1) or (0, 1]",
        "Use \\(foo\\) to group", "(see the manual", "f(x) = [a]", "word) and (other", "(\xC3\xA9",
        "(0123456789abcdefghij", "(a third per turn,", "[b", "\\(x"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    EXPECT_TRUE(spans.empty()) << describe(text, spans);
  }
  // A lone bracket touching a placeholder is the placeholder's neighbour, not a span.
  for (const char* text : {"\"%s\")", "({0}", "[%1"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    ASSERT_EQ(spans.size(), 1u) << describe(text, spans);
    EXPECT_NE(spans[0].kind, Lone) << describe(text, spans);
  }
  // 200,000 brackets, each alone or closing another kind's: linear.
  const std::string many = std::string(100000, '(') + std::string(100000, ']');
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ProtectedSpan> spans = find_protected_spans(many);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(spans.empty());  // one word of 200,000 bytes: no span
  const std::string words = [] {
    std::string text;
    for (int i = 0; i < 50000; ++i) text += "( } ";
    return text;
  }();
  EXPECT_EQ(find_protected_spans(words).size(), 100000u);
}

// Markdown's emphasis markers are tags that open and close alike: paired as md4c (CommonMark)
// pairs them, the later of a pair the closing one. A marker without its partner, a
// multiplication, an identifier's '_', an escaped '*' and a file filter are text; ***x*** is
// emphasis around strong emphasis, and a link's destination inside emphasis is no marker.
TEST(ProtectedSpans, MarkdownEmphasis) {
  expect_table({
      {"Save **all** files now.", {{"**", T, 1}, {"**", T, 0}}},
      {"This is *very* important.", {{"*", T, 1}, {"*", T, 0}}},
      {"Open __settings__ or _this_ first.",
       {{"__", T, 1}, {"__", T, 0}, {"_", T, 3}, {"_", T, 2}}},
      {"**Note:** restart %s.", {{"**", T, 1}, {"**", T, 0}, {"%s", P}}},
      {"*a **b** c*", {{"*", T, 3}, {"**", T, 2}, {"**", T, 1}, {"*", T, 0}}},
      {"**<b>x</b>**", {{"**", T, 3}, {"<b>", T, 2}, {"</b>", T, 1}, {"**", T, 0}}},
      {"Use `a*b*c` and https://example.com/a_b_c",
       {{"`a*b*c`", C}, {"https://example.com/a_b_c", U}}},
      {"5 * 3 * 2, max_length, snake_case_name", {}},
      {"Images (*.png;*.jpg)", {}},
      {"Required fields are marked *", {}},
      {"***x*** and ** x **", {{"*", T, 3}, {"**", T, 2}, {"**", T, 1}, {"*", T, 0}}},
      {"** x ** and \\*x\\* and ***", {}},
      {"_[the guide](https://a.org/x_y)_",
       {{"_", T, 3}, {"[", T, 2}, {"](https://a.org/x_y)", T, 1}, {"_", T, 0}}},
      {"    *indented* or in <p>**HTML**</p>",
       {{"*", T, 1}, {"*", T, 0}, {"<p>", T, 5}, {"**", T, 4}, {"**", T, 3}, {"</p>", T, 2}}},
      {"_Open", {{"_", A}}},
  });
  const auto spans = find_protected_spans("Save **all** and <b>x</b>");
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_FALSE(spans[0].closing);
  EXPECT_TRUE(spans[1].closing);
  EXPECT_FALSE(spans[2].closing);
  EXPECT_TRUE(spans[3].closing);
}

// Markdown's inline links and images are tag pairs: "[" (an image's "![") opens, and "](" with the
// destination, the title and the ")" closes. The link text is what a translator translates; the
// demo models, reading "[text](url)" as words, dropped or doubled its brackets in long sentences
// ("[PyYAML-Fehlerhttps://..."). A reference link's closer is "][label]". Links md4c does not
// read as links (a link with no text, brackets alone) keep what they had: text, and the
// destination an address.
TEST(ProtectedSpans, MarkdownLinksAndImages) {
  expect_table({
      {"See [the manual](docs/setup.md) and ![Logo](logo.png) or [x](https://a.org/b).",
       {{"[", T, 1},
        {"](docs/setup.md)", T, 0},
        {"![", T, 3},
        {"](logo.png)", T, 2},
        {"[", T, 5},
        {"](https://a.org/b)", T, 4}}},
      // Titles, angle-bracket destinations, brackets in a destination, an empty one.
      {"[a](u \"Title (x)\") [b](<my file.md>) [c](u(1)) [d]()",
       {{"[", T, 1},
        {"](u \"Title (x)\")", T, 0},
        {"[", T, 3},
        {"](<my file.md>)", T, 2},
        {"[", T, 5},
        {"](u(1))", T, 4},
        {"[", T, 7},
        {"]()", T, 6}}},
      // Spans inside the text; emphasis inside and around; a badge: an image in a link.
      {"[`make` and *more*](u) *[a](u)* [![CI](ci.svg)](https://ci.example.org)",
       {{"[", T, 4},
        {"`make`", C},
        {"*", T, 3},
        {"*", T, 2},
        {"](u)", T, 0},
        {"*", T, 8},
        {"[", T, 7},
        {"](u)", T, 6},
        {"*", T, 5},
        {"[", T, 12},
        {"![", T, 11},
        {"](ci.svg)", T, 10},
        {"](https://ci.example.org)", T, 9}}},
      // Over a line break; an escaped bracket and an entity in the text.
      {"[the\nguide](g.md) [a\\]b &amp; c](u)",
       {{"[", T, 1}, {"](g.md)", T, 0}, {"[", T, 4}, {"&amp;", E}, {"](u)", T, 2}}},
      // Reference links, whose definitions are elsewhere in the document: a full one's label is
      // the closer's; a collapsed one's text is its label, one span whole (en-de looped on
      // "[FAQ][]": "[FAQ][][][][]...", en-fr translated the label: "[html.][]").
      {"Read the [user guide][guide] and the [FAQ][] or [*the* FAQ][] first.",
       {{"[", T, 1}, {"][guide]", T, 0}, {"[FAQ][]", C}, {"[*the* FAQ][]", C}}},
      {"[*a*][r] [![b](b.svg)][ci]",
       {{"[", T, 3},
        {"*", T, 2},
        {"*", T, 1},
        {"][r]", T, 0},
        {"[", T, 7},
        {"![", T, 6},
        {"](b.svg)", T, 5},
        {"][ci]", T, 4}}},
      // A Hugo shortcode in a destination (its blanks are the shortcode's); not in the text.
      {"[the releases]({{< param repo >}}/releases) and [{{< year >}}](y.md)",
       {{"[", T, 1},
        {"]({{< param repo >}}/releases)", T, 0},
        {"[", T, 4},
        {"{{< year >}}", Br},
        {"](y.md)", T, 2}}},
      // Not links: a shortcut reference (brackets alone), an empty label, a checkbox.
      {"[ref] or [ ] and [x] and [][] or [a][ ] x", {}},
      {"See [RFC 2119] (page 3).", {{"2119", N}}},
  });
}

// Numbers the demo models garbled ("2024-01-03" as "2024-024-01-01-01-0", "23:59:59" as
// "23:59:59:59", "3 March 2024" as "3 March 24"): two digits or a separator between digits; a
// lone digit and digits inside a word are not.
TEST(ProtectedSpans, Numbers) {
  expect_table({
      {"The meeting is on 2024-01-03 at 10:30.", {{"2024-01-03", N}, {"10:30", N}}},
      {"It weighs 1.5 kg, costs \xE2\x82\xAC"
       "5,000.50 (12/31/2023).",
       {{"1.5", N}, {"\xE2\x82\xAC", Sym}, {"5,000.50", N}, {"12/31/2023", N}}},
      {"IP 192.168.0.1 on port 8080, 32-bit, 75% done",
       {{"192.168.0.1", N}, {"8080", N}, {"32", N}, {"75", N}}},
      {"Step 3 of 1 file: %1$s and {0} stay theirs", {{"%1$s", P}, {"{0}", Br}}},
      // A phone number is one span: the models dropped a group of one seen apart.
      {"Call +1 555 0100 or +44 (0)20 7946 0958, fax +49-30-1234567.",
       {{"+1 555 0100", N}, {"+44 (0)20 7946 0958", N}, {"+49-30-1234567", N}}},
      {"+1 555 0100x or +1 555 a", {{"555", N}, {"555", N}}},
  });
  for (const char* text : {"+12", "a+1 555 0100", "+1 2 3", "+ 1 555 0100"}) {
    for (const ProtectedSpan& span : find_protected_spans(text)) {
      EXPECT_NE(text[span.begin], '+') << text << ": not a phone number";
    }
  }
  for (const char* text : {"mp3 x86_64 v1.2.3 10th 3D 1.5kg H2O",
                           "caf\xC3\xA9"
                           "42",
                           "1 2 3"}) {
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    EXPECT_TRUE(spans.empty()) << describe(text, spans);
  }
}

// Pictographs a model would swap for another symbol or words: each a span, emoji sequences whole
// (skin tone, ZWJ, flags, keycaps), among other spans with their pairs renumbered.
TEST(ProtectedSpans, Symbols) {
  expect_table({
      {"Save \xF0\x9F\x98\x80 the file", {{"\xF0\x9F\x98\x80", Sym}}},
      {"Done \xE2\x9C\x93 (\xC2\xA9 2026, 20 \xC2\xB0"
       "C)",
       {{"\xE2\x9C\x93", Sym}, {"\xC2\xA9", Sym}, {"2026", N}, {"20", N}, {"\xC2\xB0", Sym}}},
      {"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD ok \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB x "
       "\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7 1\xEF\xB8\x8F\xE2\x83\xA3",
       {{"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", Sym},
        {"\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB", Sym},
        {"\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA", Sym},
        {"\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7", Sym}}},
      {"<b>\xE2\x98\x85 %s</b> \xE2\x98\x85",
       {{"<b>", T, 3}, {"\xE2\x98\x85", Sym}, {"%s", P}, {"</b>", T, 0}, {"\xE2\x98\x85", Sym}}},
      {"<span title=\"\xE2\x9C\x93\">x</span>",
       {{"<span title=\"\xE2\x9C\x93\">", T, 1}, {"</span>", T, 0}}},
      {"caf\xC3\xA9 na\xC3\xAFve \xC2\xB4 x", {}},  // letters, a modifier symbol
      // Currency and math symbols outside ASCII (ASCII's are text): "€5", "5 £", "≤", "→".
      {"\xE2\x82\xAC"
       "5 or 5 \xC2\xA3, x \xE2\x89\xA4 y \xE2\x86\x92 z, 2 + 2 = 4",
       {{"\xE2\x82\xAC", Sym}, {"\xC2\xA3", Sym}, {"\xE2\x89\xA4", Sym}, {"\xE2\x86\x92", Sym}}},
  });
}

TEST(ProtectedSpans, Printf) {
  expect_table({
      {"Save the file as %s", {{"%s", P}}},
      {"%d of %u, %i, %c, %E", {{"%d", P}, {"%u", P}, {"%i", P}, {"%c", P}, {"%E", P}}},
      {"%qs %qT %qD %qE %q+D %q#T",
       {{"%qs", P}, {"%qT", P}, {"%qD", P}, {"%qE", P}, {"%q+D", P}, {"%q#T", P}}},
      {"%.250s %lu %.*s %zu %1$s %2$d",
       {{"%.250s", P}, {"%lu", P}, {"%.*s", P}, {"%zu", P}, {"%1$s", P}, {"%2$d", P}}},
      {"%-25s %+d %#x %5.2f %02d %lld %hhx %*d",
       {{"%-25s", P},
        {"%+d", P},
        {"%#x", P},
        {"%5.2f", P},
        {"%02d", P},
        {"%lld", P},
        {"%hhx", P},
        {"%*d", P}}},
      {"%<PRId64>.%06<PRId64> s", {{"%<PRId64>", P}, {"%06<PRId64>", P}}},
      {"%(name)s was born in %(place)-10s", {{"%(name)s", P}, {"%(place)-10s", P}}},
      {"%Y-%m-%d %H:%M", {{"%Y", P}, {"%m", P}, {"%d", P}, {"%H", P}, {"%M", P}}},
      {"%'d files", {{"%'d", P}}},
      {"#%2d: %9ju", {{"%2d", P}, {"%9ju", P}}},  // no Qt argument here: widths
      // Apple's: Xcode's XLIFF gave "Supprimer « %1$@ » depuis %2 ?" for "Delete “%1$@” from
      // %2$@?" when only %2 was a span.
      {"%@ files, delete “%1$@” from %2$@?", {{"%@", P}, {"%1$@", P}, {"%2$@", P}}},
      {"%#@files@ left in %@", {{"%#@files@", P}, {"%@", P}}},
  });
}

TEST(ProtectedSpans, GccDiagnostics) {
  expect_table({
      // Quoted code is kept whole, spans inside it included.
      {"%<#pragma %s%> at %L", {{"%<#pragma %s%>", P}, {"%L", P}}},
      {"need %<typename%> before %<%T::%D%>", {{"%<typename%>", P}, {"%<%T::%D%>", P}}},
      {"won%'t warn", {{"%'", P}}},
      {"changed in %{GCC 11.1%}", {{"%{", P}, {"11.1", N}, {"%}", P}}},
      // Without a %> the '<' is markup's: the closing tag survives.
      {"<span>$n|%</span>", {{"<span>", T, 2}, {"$n|", V}, {"</span>", T, 0}}},
  });
}

TEST(ProtectedSpans, PercentAndPositional) {
  expect_table({
      {"100%% done", {{"100", N}, {"%%", Pct}}},
      {"%1 of %2", {{"%1", Pos}, {"%2", Pos}}},
      {"%99 items", {{"%99", Pos}}},
      {"%n file(s)", {{"%n", Pos}}},
      {"%L1 bytes", {{"%L1", Pos}}},
      // In a Qt string %1x is %1 then "x"; a width of 1 is pointless in printf anyway.
      {"%1x%2 (%3Mpx)", {{"%1", Pos}, {"%2", Pos}, {"%3", Pos}}},
      {"Retry in %1s.", {{"%1", Pos}}},
      {"%1 took %2d", {{"%1", Pos}, {"%2", Pos}}},
      {"%1$s", {{"%1$s", P}}},
  });
}

TEST(ProtectedSpans, NamedPercentVariables) {
  expect_table({
      {"%PRODUCTNAME %VERSION", {{"%PRODUCTNAME", V}, {"%VERSION", V}}},
      {"Last checked: %DATE%", {{"%DATE%", V}}},
      // irssi colour codes: a one-letter code keeps its digits, not the next code's percent.
      {"%C26%C sets", {{"%C26", V}, {"%C", P}}},
      {"%{key}-click to open %{link}", {{"%{key}", V}, {"%{link}", V}}},
  });
}

TEST(ProtectedSpans, Braces) {
  expect_table({
      {"{0} of {1}", {{"{0}", Br}, {"{1}", Br}}},
      {"{} and {name}", {{"{}", Br}, {"{name}", Br}}},
      {"{quantity} {0:N2} {0,-10} {0:yyyy-MM-dd}",
       {{"{quantity}", Br}, {"{0:N2}", Br}, {"{0,-10}", Br}, {"{0:yyyy-MM-dd}", Br}}},
      {"{node.label} {items[0]} {0!s} {:d}",
       {{"{node.label}", Br}, {"{items[0]}", Br}, {"{0!s}", Br}, {"{:d}", Br}}},
      // Templates' tags, whole: Hugo's shortcodes, Jinja's and Django's statements and comments.
      {"See {{< ref \"install.md\" >}} and {{% notice tip %}}Save often.{{% /notice %}}",
       {{"{{< ref \"install.md\" >}}", Br}, {"{{% notice tip %}}", Br}, {"{{% /notice %}}", Br}}},
      {"{% if user %}Hello {{ user.name }}{% endif %} {# a note #}",
       {{"{% if user %}", Br}, {"{{ user.name }}", Br}, {"{% endif %}", Br}, {"{# a note #}", Br}}},
      // Not tags: nothing inside, no end on the line.
      {"{##} {# } and {{< open\n>}}", {}},
  });
}

TEST(ProtectedSpans, IcuMessages) {
  expect_table({
      {"You have {count, plural, one {# file} other {# files}}.",
       {{"{count, plural, one {# file} other {# files}}", Icu}}},
      {"{g, select, male {He} female {She} other {They}} left",
       {{"{g, select, male {He} female {She} other {They}}", Icu}}},
      {"{n,selectordinal,one{#st} other{#th}}", {{"{n,selectordinal,one{#st} other{#th}}", Icu}}},
      {"{0, number} on {d, date, short} at {t, time}",
       {{"{0, number}", Icu}, {"{d, date, short}", Icu}, {"{t, time}", Icu}}},
      {"{a, plural, one {{b, select, x {#} other {y}}} other {z}}",
       {{"{a, plural, one {{b, select, x {#} other {y}}} other {z}}", Icu}}},
      // Unbalanced: not a message; its inner fields still are fields.
      {"{a, plural, one {x} other {y}", {{"{x}", Br}, {"{y}", Br}}},
  });
}

// A '#' standing alone is an ICU plural case's number (a text that is one message has its cases
// translated one by one: documents/icu_message.h); touching a word it is the word's.
TEST(ProtectedSpans, PluralNumberSigns) {
  expect_table({
      {"# files", {{"#", Num}}},
      {"You have # new messages.", {{"#", Num}}},
      {"Press # to confirm (#).", {{"#", Num}, {"#", Num}}},
      {"#st", {}},
      {"C# and F#, #1, #define, ##, #hashtag, é# #é #-1 a#b", {}},
      {"#{name} #%d", {{"{name}", Br}, {"%d", P}}},
      {"See https://example.com/#/a # here", {{"https://example.com/#/a", U}, {"#", Num}}},
  });
}

TEST(ProtectedSpans, Variables) {
  expect_table({
      {"$(ARG1) $(unit) $(DARKTABLE.NAME)",
       {{"$(ARG1)", V}, {"$(unit)", V}, {"$(DARKTABLE.NAME)", V}}},
      {"${var} $OMP_NUM_THREADS", {{"${var}", V}, {"$OMP_NUM_THREADS", V}}},
      {"$player_name, side $side_number|.", {{"$player_name", V}, {"$side_number|", V}}},
      {"$unit.name| attacks", {{"$unit.name|", V}}},
      {"\"$filename$\" exists", {{"$filename$", V}}},
      // i18next's nesting: the key (and its options) is not words to translate.
      {"Welcome, $t(common.user)! $t(items, {\"count\": {{n}} })",
       {{"$t(common.user)", V}, {"$t(items, {\"count\": {{n}} })", V}}},
      {"$t() $t(unclosed", {{"$t", V}, {"$t", V}}},
      // Leftmost wins: the $s of %1$s is part of the printf conversion.
      {"%1$s and %2$s", {{"%1$s", P}, {"%2$s", P}}},
      {"costs $5", {}},
  });
}

TEST(ProtectedSpans, TagsPairNestingAware) {
  expect_table({
      {"<b>bold</b>", {{"<b>", T, 1}, {"</b>", T, 0}}},
      {"<b><b>x</b></b>", {{"<b>", T, 3}, {"<b>", T, 2}, {"</b>", T, 1}, {"</b>", T, 0}}},
      {"<p>a<br>b</p>", {{"<p>", T, 2}, {"<br>", T}, {"</p>", T, 0}}},
      {"<span foreground=\"red\">x</span>",
       {{"<span foreground=\"red\">", T, 1}, {"</span>", T, 0}}},
      {"<br/><nl/><br />", {{"<br/>", T}, {"<nl/>", T}, {"<br />", T}}},
      {"<B>x</B> <BR>", {{"<B>", T, 1}, {"</B>", T, 0}, {"<BR>", T}}},
      {"<a href=\"%s\">link</a>", {{"<a href=\"%s\">", T, 1}, {"</a>", T, 0}}},
      // Unknown names: spans only paired, self-closing or with attributes.
      {"<header>Terrain</header>", {{"<header>", T, 1}, {"</header>", T, 0}}},
      {"<x/> <x y=\"1\">", {{"<x/>", T}, {"<x y=\"1\">", T}}},
      {"Usage: foo <file> <number>", {}},
      {"<FILENAME> or <filename>", {{"<filename>", T}}},
      {"<Sequence [%1]>", {{"%1", Pos}}},
      // Unbalanced known tags are still spans, without a partner.
      {"<b>bold", {{"<b>", T}}},
      {"bold</b>", {{"</b>", T}}},
      {"<b><i>x</b></i>", {{"<b>", T, 2}, {"<i>", T}, {"</b>", T, 0}, {"</i>", T}}},
  });
}

// react-i18next's Trans component numbers its elements: "<0>items</0>" lost its "<0>" (en-fr)
// when the model read it as text; its "{{count}}" was the field "{count}" between two braces.
// The spans a format string's arguments fill, those inside a link's closer too.
TEST(ProtectedSpans, ArgumentSpansIncludeALinkClosersInsides) {
  const std::string text = "[%d files](%s) and [%1$s][r]";
  std::vector<std::string> found;
  for (const ProtectedSpan& span : find_argument_spans(text)) {
    found.push_back(text.substr(span.begin, span.end - span.begin));
    EXPECT_EQ(span.partner, -1);
  }
  EXPECT_EQ(found, (std::vector<std::string>{"[", "%d", "%s", "[", "%1$s"}));
}

// A Hugo shortcode inside a tag's attribute is part of the tag.
TEST(ProtectedSpans, ShortcodesInsideTags) {
  expect_table({
      {"<img class=\"svg\" src=\"/docs/{{< param v >}}/a.svg\" alt=\"Logo\">",
       {{"<img class=\"svg\" src=\"/docs/{{< param v >}}/a.svg\" alt=\"Logo\">", T}}},
      {"<a href=\"{{% ref x %}}\">Go</a>", {{"<a href=\"{{% ref x %}}\">", T, 1}, {"</a>", T, 0}}},
      {"<b {{< x", {{"{{<", Lone}}},
  });
}

// An HTML comment is a tag standing alone, whole, up to 4 kB; one without its end is text.
TEST(ProtectedSpans, HtmlComments) {
  expect_table({
      {"Save <!-- a note --> the file.", {{"<!-- a note -->", T}}},
      {"<!--lib/timers.js--> <b>x</b><!---->",
       {{"<!--lib/timers.js-->", T}, {"<b>", T, 2}, {"</b>", T, 1}, {"<!---->", T}}},
      {"<!-- YAML\nadded: v11.0.0\n-->", {{"<!-- YAML\nadded: v11.0.0\n-->", T}}},
      {"<!-- no end", {}},
  });
  EXPECT_TRUE(find_protected_spans("<!-- " + std::string(5000, 'x') + " -->").empty());
}

TEST(ProtectedSpans, NumberedTags) {
  expect_table({
      {"You have <0>{{count}}</0> new <1>messages</1>.",
       {{"<0>", T, 2}, {"{{count}}", Br}, {"</0>", T, 0}, {"<1>", T, 4}, {"</1>", T, 3}}},
      {"Line<2/>break", {{"<2/>", T}}},
      {"x <0 > y, a<12345>b", {{"12345", N}}},  // no tag: a number between two brackets
      // i18next's, Mustache's and Jinja's double braces are one span.
      {"Hi {{ user.name }}, {{count|upper}} {{}} {{ a b",
       {{"{{ user.name }}", Br}, {"{{count|upper}}", Br}, {"{}", Br}, {"{{", Lone}}},
  });
}

TEST(ProtectedSpans, EntitiesAndEscapes) {
  expect_table({
      {"&amp; &gt; &#160; &#x2026; &kappname;",
       {{"&amp;", E}, {"&gt;", E}, {"&#160;", E}, {"&#x2026;", E}, {"&kappname;", E}}},
      {"line\\n\\ttab \\r \\\\ \\\"q\\\"",
       {{"\\n", Esc}, {"\\t", Esc}, {"\\r", Esc}, {"\\\\", Esc}, {"\\\"", Esc}, {"\\\"", Esc}}},
      {"C:\\\\new", {{"\\\\", Esc}}},  // \\ then "new": not \n
      {"\\d \\x", {}},
  });
}

TEST(ProtectedSpans, Accelerators) {
  expect_table({
      {"&File", {{"&", A}}},
      {"Save &As", {{"&", A}}},
      {"_Open", {{"_", A}}},
      {"O_pen", {{"_", A}}},
      {"<b>_Accounts</b>", {{"<b>", T, 2}, {"_", A}, {"</b>", T, 0}}},
      {"&&Save &As", {{"&", A}}},
      {"&amp; &File", {{"&amp;", E}, {"&", A}}},
      // Not markers: identifiers, two candidates, && alone, code, URLs, query strings.
      {"max_length", {}},
      {"snake_case and _Open", {{"_", A}}},
      {"$player_name", {{"$player_name", V}}},
      {"_float128 _gcc_isr _open()", {}},
      {"&File &Edit", {}},
      {"_Open &File", {}},
      {"Tom && Jerry", {}},
      {"Tom & Jerry", {}},
      {"%1_signed.%2", {{"%1", Pos}, {"%2", Pos}}},
      {"%<_Atomic%>", {{"%<_Atomic%>", P}}},
      {"Filtering_on|all", {}},
      {"see https://x.org/Proprietary_software", {{"https://x.org/Proprietary_software", U}}},
      {"?a=1&b=2", {}},
  });
  expect_spans({"&File", {}}, {.accelerators = false});
  expect_spans({"_Open %s", {{"%s", P}}}, {.accelerators = false});
}

TEST(ProtectedSpans, NotSpans) {
  expect_table({
      {"", {}},
      {"50% done", {{"50", N}}},  // a number, and no percent span
      {"100%", {{"100", N}}},
      {"% d", {}},
      {"50%-60%", {{"50", N}, {"60", N}}},
      {"%02 alone", {}},
      {"%100 and %0", {}},
      {"function() { return 0; }", {}},
      {"{ \"a\": 1 }", {}},
      {"{ unbalanced", {{"{", Lone}}},  // no field: a brace nothing pairs
      {"} {", {{"}", Lone}, {"{", Lone}}},
      {"{...} {!} {K,M,G}", {}},
      {"<old>=<new>", {}},
      {"a < b > c", {}},
      {"1 < 2", {}},
      {"&", {}},
      {"&#;", {}},
      {"$", {}},
      {"\\", {}},
      {"%", {}},
      {"<", {}},
  });
}

TEST(ProtectedSpans, Overlaps) {
  expect_table({
      {"%%s", {{"%%", Pct}}},  // %% first: a literal percent then "s"
      {"%%%s", {{"%%", Pct}, {"%s", P}}},
      {"{%s}", {{"%s", P}}},
      {"${%s}", {{"%s", P}}},
      {"<b>%s</b>", {{"<b>", T, 2}, {"%s", P}, {"</b>", T, 0}}},
      {"{count, plural, one {%d file} other {%d files}}",
       {{"{count, plural, one {%d file} other {%d files}}", Icu}}},
      {"&lt;b&gt;", {{"&lt;", E}, {"&gt;", E}}},
  });
}

TEST(ProtectedSpans, MalformedInputStaysSane) {
  std::string many;
  for (int i = 0; i < 200; ++i) {
    many += '%';
    many += std::to_string(i % 9 + 1);
    many += ' ';
  }
  EXPECT_EQ(find_protected_spans(many).size(), 200u);

  const std::string invalid_utf8 = "\xff\xfe%s \xc3(\x80 <b>\xe2\x82</b>";
  expect_spans({invalid_utf8, {{"%s", P}, {"<b>", T, 2}, {"</b>", T, 1}}});
  const std::string with_nul("a\0%s", 4);
  expect_spans({with_nul, {{"%s", P}}});

  // Pathological lengths: bounded work, no recursion; an address-like word of 100 kB ("x." and
  // a run of closing brackets: ICU's nested messages end in one) too.
  for (const std::string_view unit : {"{", "<", "%", "$", "&", "_", "\\", "}", ")", ".", "@", "a.",
                                      "a.b/", "x@a.", "*", "*a ", "a** ", "a**b ", "**a*"}) {
    std::string text;
    while (text.size() < 100000) text += unit;
    if (unit == "}" || unit == ")") text = "a.com/(x{" + text;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<ProtectedSpan> spans = find_protected_spans(text);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 0.5) << "100 kB of '" << unit << "'";
    EXPECT_EQ(check_span_invariants(text, spans), "");
  }
  std::string nested;
  for (int i = 0; i < 20000; ++i) nested += "{a, plural, one ";
  nested += std::string(20000, '}');
  const auto icu = find_protected_spans(nested);
  ASSERT_EQ(icu.size(), 1u);
  EXPECT_EQ(icu[0].kind, SpanKind::kIcuMessage);
  EXPECT_EQ(icu[0].end, nested.size());
}

TEST(ProtectedSpans, RandomTextKeepsInvariants) {
  std::mt19937 rng(15);
  const std::string alphabet = "%{}$<>/&_\\;#ab1 ,.'\"=nsdq*(|)x\xc3\xa9\xff";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 64);
  int with_spans = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int n = length(rng); n > 0; --n) text += alphabet[pick(rng)];
    for (const bool accelerators : {true, false}) {
      const auto spans = find_protected_spans(text, {.accelerators = accelerators});
      with_spans += spans.empty() ? 0 : 1;
      ASSERT_EQ(check_span_invariants(text, spans), "") << text;
    }
  }
  EXPECT_GT(with_spans, 10000);  // the alphabet does produce spans: the test checks something
}

TEST(ProtectedSpans, KindNames) {
  EXPECT_STREQ(span_kind_name(SpanKind::kPrintf), "printf");
  EXPECT_STREQ(span_kind_name(SpanKind::kIcuMessage), "icu_message");
  EXPECT_STREQ(span_kind_name(SpanKind::kAccelerator), "accelerator");
  EXPECT_STREQ(span_kind_name(SpanKind::kUrl), "url");
  EXPECT_STREQ(span_kind_name(SpanKind::kCode), "code");
  EXPECT_STREQ(span_kind_name(SpanKind::kNumber), "number");
  EXPECT_STREQ(span_kind_name(SpanKind::kPluralNumber), "plural_number");
  EXPECT_STREQ(span_kind_name(SpanKind::kLoneBracket), "lone_bracket");
}

}  // namespace
}  // namespace rpt
