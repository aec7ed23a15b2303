// PO catalogues: what is translated, what is kept byte for byte, plural forms, the header, and
// gettext's own tools (msgfmt --check, msgcat, msginit) as the judges of the files rpt writes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "documents/c_format_order.h"
#include "documents/catalog.h"
#include "documents/plural_forms.h"

namespace rpt::documents {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string fixture(const std::string& name) {
  return read_file(std::string(RPT_SOURCE_DIR) + "/tests/fixtures/catalogs/" + name);
}

// A stand-in translation that keeps what msgfmt checks (directives, leading and trailing
// newlines) and is visibly not the source.
std::string fake_translation(const std::string& text) {
  const std::size_t at = std::min(text.find_first_not_of('\n'), text.size());
  return text.substr(0, at) + "~" + text.substr(at);
}

std::vector<std::string> fake_translations(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const CatalogText& text : catalog.texts()) out.push_back(fake_translation(text.text));
  return out;
}

struct ToolRun {
  int status = -1;
  std::string output;
};

// Runs a shell command with `input` written to a temporary file named by {}; its standard output.
ToolRun run_tool(const std::string& command, const std::string& input) {
  char path[] = "/tmp/rpt-po-test-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp");
  FILE* file = fdopen(fd, "wb");
  std::fwrite(input.data(), 1, input.size(), file);
  std::fclose(file);
  std::string line = command;
  line.replace(line.find("{}"), 2, path);
  ToolRun run;
  FILE* pipe = popen(line.c_str(), "r");
  std::array<char, 4096> buffer;
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    run.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::remove(path);
  return run;
}

bool have_gettext_tools() { return run_tool("msgfmt --version > {}", "").status == 0; }

#define REQUIRE_GETTEXT_TOOLS() \
  if (!have_gettext_tools()) GTEST_SKIP() << "msgfmt is missing: apt-get install gettext"

std::unique_ptr<Catalog> parse_po(const std::string& bytes, const std::string& language,
                                  CatalogOptions options = {}) {
  options.target_language = language;
  return Catalog::parse(bytes, TextFormat::kPo, options);
}

// Blank-line separated blocks: a PO file's header and entries.
std::vector<std::string> blocks(const std::string& po) {
  std::vector<std::string> out(1);
  std::istringstream lines(po);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) {
      if (!out.back().empty()) out.emplace_back();
    } else {
      out.back() += line + "\n";
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

TEST(PoCatalog, ListsUntranslatedEntriesAndTheirPlurals) {
  auto catalog = parse_po(fixture("app.po"), "de");
  const CatalogStats& stats = catalog->stats();
  EXPECT_EQ(stats.entries, 12);  // the header and the obsolete entry apart
  EXPECT_EQ(stats.to_translate, 10);
  EXPECT_EQ(stats.already_translated, 2);  // "Quit", and the fuzzy "Save the files"
  EXPECT_EQ(stats.plural_entries, 2);
  ASSERT_EQ(catalog->texts().size(), 12u);
  EXPECT_EQ(catalog->texts()[0].text, "Open the settings");
  EXPECT_EQ(catalog->texts()[4].text, "%d file was deleted.");
  EXPECT_EQ(catalog->texts()[5].text, "%d files were deleted.");
  // Escapes are the characters they stand for; a wrapped msgid is one text.
  EXPECT_EQ(catalog->texts()[9].text, "Usage:\n  app [OPTION] FILE\n");
  EXPECT_EQ(catalog->texts()[10].text, "Copied %(count)d items to \"%(folder)s\"\t(done)");
  EXPECT_NE(catalog->texts()[8].text.find("try again. If the problem"), std::string::npos);
  for (const CatalogText& text : catalog->texts()) EXPECT_EQ(text.format, TextFormat::kText);
}

TEST(PoCatalog, GermanCatalogueFillsEveryFormAndPassesMsgfmtCheck) {
  REQUIRE_GETTEXT_TOOLS();
  auto catalog = parse_po(fixture("app.po"), "de");
  const std::string po = catalog->render(fake_translations(*catalog));
  const ToolRun check = run_tool("msgfmt --check -o /dev/null {} 2>&1", po);
  EXPECT_EQ(check.status, 0) << check.output << po;
  EXPECT_NE(po.find("\"Language: de\\n\""), std::string::npos) << po;
  EXPECT_NE(po.find("\"Content-Type: text/plain; charset=UTF-8\\n\""), std::string::npos);
  EXPECT_NE(po.find("\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\""), std::string::npos);
  EXPECT_NE(po.find("\"X-Generator: rpt\\n\""), std::string::npos);
  EXPECT_NE(po.find("msgstr[0] \"~%d file was deleted.\"\nmsgstr[1] \"~%d files were deleted.\""),
            std::string::npos)
      << po;
  // de's form 0 is n == 1's alone: it takes the singular even without the directive.
  EXPECT_NE(po.find("msgstr[0] \"~One folder\"\nmsgstr[1] \"~%d folders\""), std::string::npos);
  EXPECT_NE(po.find("msgctxt \"menu\"\nmsgid \"_Open\"\nmsgstr \"~_Open\""), std::string::npos);
  EXPECT_NE(po.find("msgstr \"\"\n\"~Usage:\\n\"\n\"  app [OPTION] FILE\\n\""), std::string::npos)
      << po;
  // Machine translations are fuzzy: msgfmt leaves them out until a translator reviews them.
  const ToolRun statistics = run_tool("msgfmt --statistics -o /dev/null {} 2>&1", po);
  EXPECT_NE(statistics.output.find("1 translated message, 11 fuzzy translations"),
            std::string::npos)
      << statistics.output;
}

TEST(PoCatalog, FrenchFormZeroServesZeroAndOneSoTakesThePluralWithoutTheDirective) {
  REQUIRE_GETTEXT_TOOLS();
  CatalogOptions unmarked;
  unmarked.mark_for_review = false;
  auto catalog = parse_po(fixture("app.po"), "fr", unmarked);
  const std::string po = catalog->render(fake_translations(*catalog));
  const ToolRun check = run_tool("msgfmt --check -o /dev/null {} 2>&1", po);
  EXPECT_EQ(check.status, 0) << check.output << po;
  EXPECT_NE(po.find("\"Plural-Forms: nplurals=2; plural=(n > 1);\\n\""), std::string::npos);
  EXPECT_NE(po.find("msgstr[0] \"~%d file was deleted.\""), std::string::npos);
  EXPECT_NE(po.find("msgstr[0] \"~%d folders\"\nmsgstr[1] \"~%d folders\""), std::string::npos)
      << po;
  const ToolRun statistics = run_tool("msgfmt --statistics -o /dev/null {} 2>&1", po);
  EXPECT_NE(statistics.output.find("11 translated messages, 1 fuzzy translation"),
            std::string::npos)
      << statistics.output;
}

TEST(PoCatalog, RussianGetsThreeForms) {
  REQUIRE_GETTEXT_TOOLS();
  auto catalog = parse_po(fixture("app.po"), "ru");
  const std::string po = catalog->render(fake_translations(*catalog));
  const ToolRun check = run_tool("msgfmt --check -o /dev/null {} 2>&1", po);
  EXPECT_EQ(check.status, 0) << check.output << po;
  EXPECT_NE(po.find("msgstr[0] \"~%d file was deleted.\"\nmsgstr[1] \"~%d files were deleted.\"\n"
                    "msgstr[2] \"~%d files were deleted.\""),
            std::string::npos)
      << po;
}

TEST(PoCatalog, UntouchedEntriesComeBackAsMsgcatPrintsThem) {
  REQUIRE_GETTEXT_TOOLS();
  const std::string source = fixture("app.po");
  auto catalog = parse_po(source, "de");
  const std::string po = catalog->render(fake_translations(*catalog));
  // msgcat refuses a template's charset=CHARSET; the header is not compared.
  std::string utf8 = source;
  utf8.replace(utf8.find("charset=CHARSET"), 15, "charset=UTF-8");
  const std::vector<std::string> before = blocks(run_tool("msgcat {}", utf8).output);
  const std::vector<std::string> after = blocks(po);
  ASSERT_EQ(before.size(), after.size());
  int same = 0;
  for (std::size_t i = 1; i < before.size(); ++i) {
    if (before[i] == after[i]) {
      ++same;
    } else {  // a translated entry: its msgstr, and its fuzzy flag
      EXPECT_NE(after[i].find("msgstr"), std::string::npos);
      EXPECT_NE(after[i].find("\"~"), std::string::npos) << before[i] << after[i];
    }
  }
  EXPECT_EQ(same, 3);  // the fuzzy entry, "Quit", the obsolete entry
  // A catalogue with nothing to translate comes back as msgcat prints it, header and all.
  auto done = parse_po(run_tool("msgcat {}", po).output, "de");
  EXPECT_EQ(done->stats().to_translate, 0);
  EXPECT_EQ(done->render({}), run_tool("msgcat {}", po).output);
}

TEST(PoCatalog, FuzzyEntriesAreRetranslatedOnlyWhenAsked) {
  CatalogOptions fuzzy_too;
  fuzzy_too.translate_fuzzy = true;
  fuzzy_too.mark_for_review = false;
  auto catalog = parse_po(fixture("app.po"), "de", fuzzy_too);
  EXPECT_EQ(catalog->stats().to_translate, 11);
  const std::string po = catalog->render(fake_translations(*catalog));
  EXPECT_NE(po.find("msgid \"Save the files\"\nmsgstr \"~Save the files\""), std::string::npos)
      << po;
  EXPECT_EQ(po.find("#| msgid \"Save the file\""), std::string::npos);  // no longer fuzzy
  EXPECT_NE(po.find("msgid \"Quit\"\nmsgstr \"Beenden\""), std::string::npos);
}

TEST(PoCatalog, HeaderPluralFormsAreKept) {
  const std::string source =
      "msgid \"\"\nmsgstr \"\"\n\"Language: pl\\n\"\n\"Content-Type: text/plain; "
      "charset=UTF-8\\n\"\n"
      "\"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || "
      "n%100>=20) ? 1 : 2);\\n\"\n\n"
      "msgid \"One file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\nmsgstr[2] "
      "\"\"\n";
  auto catalog = parse_po(source, "pl-PL");
  const std::string po = catalog->render({"Jeden plik", "%d pliki"});
  // pl's form 0 is n == 1 alone (the table knows the header's expression).
  EXPECT_NE(po.find("msgstr[0] \"Jeden plik\"\nmsgstr[1] \"%d pliki\"\nmsgstr[2] \"%d pliki\""),
            std::string::npos)
      << po;
  EXPECT_NE(po.find("n%100>=20) ? 1 : 2);"), std::string::npos);
}

TEST(PoCatalog, PluralTableAgreesWithMsginit) {
  REQUIRE_GETTEXT_TOOLS();
  const std::string pot =
      "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
      "msgid \"a\"\nmsgid_plural \"b\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\n";
  for (const char* language :
       {"be", "bg",    "cs", "da", "de", "el", "es", "et", "fi", "fr", "ga",
        "he", "hr",    "hu", "it", "ja", "ko", "lt", "lv", "nb", "nl", "pl",
        "pt", "pt_BR", "ro", "ru", "sk", "sl", "sr", "sv", "tr", "uk", "vi"}) {
    const PluralRule* rule = plural_rule_for(language);
    ASSERT_NE(rule, nullptr) << language;
    const ToolRun init = run_tool(std::string("msginit --no-translator -l ") + language +
                                      " -i {} -o - 2>/dev/null | msgcat --no-wrap -",
                                  pot);
    const std::string expected = "Plural-Forms: " + plural_forms_header(*rule) + "\\n";
    EXPECT_NE(init.output.find(expected), std::string::npos)
        << language << ": rpt " << expected << "\nmsginit " << init.output;
    EXPECT_EQ(plural_rule_matching(rule->nplurals, rule->expression), rule) << language;
  }
  EXPECT_EQ(plural_rule_for("xx"), nullptr);
  EXPECT_EQ(plural_rule_for("de-AT")->nplurals, 2);
  EXPECT_EQ(plural_rule_for("sr@latin")->nplurals, 3);
  EXPECT_EQ(plural_rule_for("zh_TW")->nplurals, 1);
}

TEST(PoCatalog, BadFilesGetClearErrors) {
  auto error_of = [](const std::string& bytes, const std::string& language = "de") {
    try {
      parse_po(bytes, language);
    } catch (const CatalogError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("msgid \"broken\nmsgstr \"\"\n").find("line 2: end-of-line within string"),
            std::string::npos)
      << error_of("msgid \"broken\nmsgstr \"\"\n");
  EXPECT_NE(error_of("msgid \"a\"\nmsgstr \"\"\n\nmsgid \"a\"\nmsgstr \"\"\n")
                .find("duplicate message definition"),
            std::string::npos);
  EXPECT_NE(error_of("msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=ISO-8859-1\\n\"\n")
                .find("charset is iso-8859-1"),
            std::string::npos);
  EXPECT_NE(error_of("msgid \"\"\nmsgstr \"Language: fr\\n\"\n\nmsgid \"a\"\nmsgstr \"\"\n")
                .find("Language is fr, the target is de"),
            std::string::npos);
  EXPECT_NE(error_of("msgid \"a\"\nmsgid_plural \"b\"\nmsgstr[0] \"\"\n", "xx")
                .find("no plural rule known for 'xx'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("msgid \"\xff\xfe\"\nmsgstr \"\"\n")).find("not valid UTF-8"),
            std::string::npos)
      << error_of(std::string("msgid \"\xff\xfe\"\nmsgstr \"\"\n"));
  EXPECT_NE(error_of("\x01\x02garbage").find("PO: "), std::string::npos);
  // A NUL cut gettext's line short: the fuzzer's file rendered a reference ending in a
  // backslash that joined the next line to it when read back.
  const std::string with_nul = "msgid \"a\"\nmsgstr \"\"\n\n#: b\\" + std::string(2, '\0') +
                               "c\nmsgctxt \"c\"\nmsgid \"\"\nmsgstr \"\"\n";
  EXPECT_NE(error_of(with_nul).find("PO: line 4 holds a NUL byte"), std::string::npos)
      << error_of(with_nul);
  // A header claiming 300,000 forms (found by the fuzzer: each plural entry became that many
  // strings) or an unreadable count is refused; spaces after '=' are read as gettext reads them.
  const auto with_forms = [](const std::string& forms) {
    return "msgid \"\"\nmsgstr \"Plural-Forms: " + forms +
           "\\n\"\n\nmsgid \"%d a\"\nmsgid_plural \"%d b\"\nmsgstr[0] \"\"\n";
  };
  EXPECT_NE(error_of(with_forms("nplurals=300000; plural=n%10;")).find("expected 1 to 16"),
            std::string::npos)
      << error_of(with_forms("nplurals=300000; plural=n%10;"));
  EXPECT_NE(error_of(with_forms("nplurals=99999999999999999999; plural=0;")).find("nplurals="),
            std::string::npos);
  EXPECT_NE(error_of(with_forms("nplurals=0; plural=0;")).find("expected 1 to 16"),
            std::string::npos);
  EXPECT_EQ(error_of(with_forms("nplurals= 2; plural=(n != 1);")), "no error");
  std::string many;
  for (int i = 0; i < 11; ++i) many += "msgid \"e" + std::to_string(i) + "\"\nmsgstr \"\"\n\n";
  CatalogOptions few{.target_language = "de", .max_entries = 10};
  EXPECT_THROW(Catalog::parse(many, TextFormat::kPo, few), CatalogError);
  few.max_bytes = 10;
  EXPECT_THROW(Catalog::parse(many, TextFormat::kPo, few), CatalogError);
  EXPECT_THROW(Catalog::parse(many, TextFormat::kPo, {}), CatalogError);  // no language
  auto catalog = parse_po(many, "de");
  EXPECT_THROW(catalog->render({"one"}), std::invalid_argument);
  EXPECT_EQ(error_of(""), "no error");  // an empty catalogue is a catalogue
}

// A file gettext cannot read must not cost the server a descriptor: its errors reach rpt through a
// handler that throws out of libgettextpo, and the server reads thousands of files. (gettext
// 0.21 itself loses ~16 bytes per file read, valid or not: its lexer's copy of the file name,
// per valgrind; a 1,000-entry file loses no more than a 1-entry one.)
TEST(PoCatalog, MalformedFilesLeaveNoDescriptorOpen) {
  const auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator());
  };
  const auto before = open_descriptors();
  for (int i = 0; i < 50; ++i) {
    EXPECT_THROW(parse_po("msgid \"broken\nmsgstr \"\"\n", "de"), CatalogError);
    EXPECT_THROW(parse_po("\n+", "de"), CatalogError);
  }
  EXPECT_EQ(open_descriptors(), before);
}

TEST(PoCatalog, AHundredThousandEntriesParseAndRender) {
  std::string big = "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n\n";
  for (int i = 0; i < 100000; ++i) {
    big += "#: src/file.c:" + std::to_string(i) + "\nmsgid \"Entry number " + std::to_string(i) +
           "\"\nmsgstr \"\"\n\n";
  }
  auto catalog = parse_po(big, "de");
  ASSERT_EQ(catalog->stats().to_translate, 100000);
  const std::string po = catalog->render(fake_translations(*catalog));
  EXPECT_NE(po.find("msgid \"Entry number 99999\"\nmsgstr \"~Entry number 99999\""),
            std::string::npos);
  CatalogOptions fewer;
  fewer.max_entries = 99999;
  EXPECT_THROW(parse_po(big, "de", fewer), CatalogError);
}

TEST(CFormatOrder, OutOfOrderDirectivesGetTheirSourcePositions) {
  EXPECT_EQ(c_directives_in_source_order("Index of /%s on %s:%d", "Index von /%s:%d%s"),
            "Index von /%1$s:%3$d%2$s");
  EXPECT_EQ(c_directives_in_source_order("%s in '%s' line %u", "%s Zeile %u in »%s«"),
            "%1$s Zeile %3$u in »%2$s«");
  // In order by type (two %s swapped are the same to printf), or nothing to number: unchanged.
  EXPECT_EQ(c_directives_in_source_order("%s and %s", "%s und %s"), "%s und %s");
  EXPECT_EQ(c_directives_in_source_order("%d%% of %s", "%d%% von %s"), "%d%% von %s");
  EXPECT_EQ(c_directives_in_source_order("%d%% of %s", "%s: %d%%"), "%2$s: %1$d%%");
  EXPECT_EQ(c_directives_in_source_order("%1$s %2$d", "%2$d %1$s"), "%2$d %1$s");
  EXPECT_EQ(c_directives_in_source_order("%*d %s", "%s %*d"), "%s %*d");
  EXPECT_EQ(c_directives_in_source_order("%s %d", "%d"), "%d");  // not the same directives
  EXPECT_EQ(c_directives_in_source_order("%lu files, %s", "%s: %lu Dateien"),
            "%2$s: %1$lu Dateien");
  // A directive in a Markdown link's destination counts though the model saw the link's closer
  // as one span.
  EXPECT_EQ(c_directives_in_source_order("[%d files](%s)", "[Dateien](%s) %d"),
            "[Dateien](%2$s) %1$d");
}

TEST(PoCatalog, CFormatEntriesPassMsgfmtCheckWhenTheModelReordersDirectives) {
  REQUIRE_GETTEXT_TOOLS();
  const std::string source =
      "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
      "#, c-format\nmsgid \"Index of /%s on %s:%d\"\nmsgstr \"\"\n\n"
      "#, c-format\nmsgid \"%s of %d\"\nmsgid_plural \"%s of %d files\"\n"
      "msgstr[0] \"\"\nmsgstr[1] \"\"\n\n"
      "msgid \"Not flagged %s %d\"\nmsgstr \"\"\n";
  auto catalog = parse_po(source, "de");
  const std::string po = catalog->render(
      {"Index von /%s:%d%s", "%d von %s", "%d von %s Dateien", "Nicht markiert %d %s"});
  const ToolRun check = run_tool("msgfmt --check -o /dev/null {} 2>&1", po);
  EXPECT_EQ(check.status, 0) << check.output << po;
  EXPECT_NE(po.find("msgstr \"Index von /%1$s:%3$d%2$s\""), std::string::npos) << po;
  EXPECT_NE(po.find("msgstr[0] \"%2$d von %1$s\"\nmsgstr[1] \"%2$d von %1$s Dateien\""),
            std::string::npos)
      << po;
  EXPECT_NE(po.find("msgstr \"Nicht markiert %d %s\""), std::string::npos);  // no flag: as is
}

TEST(PoCatalog, AFileWithoutHeaderGetsOne) {
  REQUIRE_GETTEXT_TOOLS();
  auto catalog = parse_po(
      "msgid \"Open file\"\nmsgstr \"\"\n\n"
      "msgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"\"\n",
      "de");
  const std::string po = catalog->render({"Datei öffnen", "%d Datei", "%d Dateien"});
  const ToolRun check = run_tool("msgfmt --check -o /dev/null {} 2>&1", po);
  EXPECT_EQ(check.status, 0) << check.output << po;
  EXPECT_EQ(po.rfind("msgid \"\"\nmsgstr \"\"\n", 0), 0u) << po;  // the header comes first
  EXPECT_NE(po.find("\"Language: de\\n\""), std::string::npos) << po;
  EXPECT_NE(po.find("charset=UTF-8"), std::string::npos);
  EXPECT_NE(po.find("\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\""), std::string::npos);
  EXPECT_NE(po.find("msgstr \"Datei öffnen\""), std::string::npos);
}

TEST(PoCatalog, FormatNames) {
  EXPECT_EQ(parse_text_format("pot"), TextFormat::kPo);
  EXPECT_EQ(parse_text_format("xlf"), TextFormat::kXliff);
  EXPECT_STREQ(text_format_name(TextFormat::kXliff), "xliff");
  EXPECT_EQ(parse_text_format("md"), TextFormat::kMarkdown);
  EXPECT_STREQ(text_format_name(TextFormat::kMarkdown), "markdown");
  EXPECT_THROW(parse_text_format("docx"), std::invalid_argument);
  EXPECT_THROW(Catalog::parse("", TextFormat::kHtml, {}), std::invalid_argument);
}

}  // namespace
}  // namespace rpt::documents
