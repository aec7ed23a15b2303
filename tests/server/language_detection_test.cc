// Language identification (server/language_detection.h) on held-out UI strings: the test split of
// the repository's data (../shared/data: English sources, German and French translations, never
// seen by CLD2's tables nor by the models' training), by length, for the candidate sets a server
// has (the sources of the models into one target), with floors a few points under the measured
// accuracy; and the contract around it: the fallback, the bounded prefix, invalid UTF-8, markup,
// several texts as one, more candidates than CLD2 takes as hints, and many threads at once.
//
// The table in docs/compatible-apis.md is what AccuracyByLength prints. With
// RPT_LANGUAGE_STRINGS=DIR (files CODE.txt, one string a line: bench/language_strings.py writes
// them from the gettext catalogues installed under /usr/share/locale), MoreLanguages prints the
// same table for those languages too.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/language_detection.h"

namespace rpt::server {
namespace {

const std::filesystem::path kData =
    std::filesystem::path(RPT_SOURCE_DIR) / ".." / "shared" / "data";

// Length buckets in code points.
constexpr std::array<std::size_t, 5> kBucketEnds = {10, 25, 50, 100, SIZE_MAX};
constexpr std::array<const char*, 5> kBucketNames = {"1-10", "11-25", "26-50", "51-100", ">100"};

std::size_t bucket_of(const std::string& text) {
  const auto code_points =
      static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      }));
  std::size_t bucket = 0;
  while (code_points > kBucketEnds[bucket]) ++bucket;
  return bucket;
}

// One column of a test split: 0 the English source, 1 the translation.
std::vector<std::string> column(const std::string& pair, int which) {
  std::vector<std::string> texts;
  std::ifstream in(kData / ("ui." + pair + ".test.tsv"));
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    texts.push_back(which == 0 ? line.substr(0, tab) : line.substr(tab + 1));
  }
  return texts;
}

// The held-out strings by language: en (the en-de split's sources), de, fr (the translations).
const std::map<std::string, std::vector<std::string>>& held_out() {
  static const std::map<std::string, std::vector<std::string>> strings = {
      {"en", column("en-de", 0)}, {"de", column("en-de", 1)}, {"fr", column("en-fr", 1)}};
  return strings;
}

bool have_data() {
  return std::filesystem::exists(kData / "ui.en-de.test.tsv") &&
         std::filesystem::exists(kData / "ui.en-fr.test.tsv");
}

struct Tally {
  std::array<int, 5> right{};
  std::array<int, 5> total{};
  int all_right() const { return std::accumulate(right.begin(), right.end(), 0); }
  int all_total() const { return std::accumulate(total.begin(), total.end(), 0); }
  double percent(std::size_t b) const { return total[b] ? 100.0 * right[b] / total[b] : 100.0; }
  double overall() const { return all_total() ? 100.0 * all_right() / all_total() : 100.0; }
};

// Accuracy per language of `strings` among `candidates`, printed as a table.
std::map<std::string, Tally> measure(const std::map<std::string, std::vector<std::string>>& strings,
                                     const std::vector<std::string>& candidates) {
  std::map<std::string, Tally> tallies;
  std::string name;
  for (const std::string& c : candidates) name += (name.empty() ? "" : ",") + c;
  std::printf("candidates {%s} (%s)\n%-6s %8s", name.c_str(), language_detector_version().c_str(),
              "lang", "all");
  for (const char* bucket : kBucketNames) std::printf(" %14s", bucket);
  std::printf("\n");
  for (const std::string& language : candidates) {
    const auto found = strings.find(language);
    if (found == strings.end()) continue;
    Tally& tally = tallies[language];
    for (const std::string& text : found->second) {
      const std::size_t b = bucket_of(text);
      ++tally.total[b];
      if (detect_language(text, candidates).language == language) ++tally.right[b];
    }
    std::printf("%-6s %7.1f%%", language.c_str(), tally.overall());
    for (std::size_t b = 0; b < kBucketNames.size(); ++b) {
      std::printf(" %6.1f%% (%4d)", tally.percent(b), tally.total[b]);
    }
    std::printf("\n");
  }
  return tallies;
}

TEST(LanguageDetectionTest, AccuracyByLength) {
  if (!have_data()) GTEST_SKIP() << "no " << kData << " (the held-out strings)";
  // Per candidate set: the floor of every language's overall accuracy, of 1-10 and of 11-25
  // code points, and of the strings over 50 (measured: see docs/compatible-apis.md).
  struct Floors {
    std::vector<std::string> candidates;
    double overall, shortest, short_, long_;
  };
  for (const Floors& floors :
       {Floors{{"en", "de"}, 88, 58, 84, 96}, Floors{{"en", "fr"}, 86, 53, 81, 95},
        Floors{{"de", "fr"}, 90, 54, 86, 96}, Floors{{"en", "de", "fr"}, 85, 51, 80, 95}}) {
    for (const auto& [language, tally] : measure(held_out(), floors.candidates)) {
      SCOPED_TRACE(language);
      EXPECT_GE(tally.overall(), floors.overall);
      EXPECT_GE(tally.percent(0), floors.shortest);
      EXPECT_GE(tally.percent(1), floors.short_);
      const int long_right = tally.right[3] + tally.right[4];
      const int long_total = tally.total[3] + tally.total[4];
      EXPECT_GE(100.0 * long_right / long_total, floors.long_);
    }
  }
}

TEST(LanguageDetectionTest, MoreCandidatesThanCld2TakesAsHints) {
  if (!have_data()) GTEST_SKIP() << "no " << kData;
  // Six candidates: narrowed four at a time.
  for (const auto& [language, tally] : measure(held_out(), {"es", "en", "it", "de", "nl", "fr"})) {
    SCOPED_TRACE(language);
    EXPECT_GE(tally.overall(), 83.0);
    EXPECT_GE(100.0 * (tally.right[3] + tally.right[4]) / (tally.total[3] + tally.total[4]), 93.0);
  }
}

TEST(LanguageDetectionTest, MoreLanguages) {
  const char* directory = std::getenv("RPT_LANGUAGE_STRINGS");
  if (directory == nullptr) GTEST_SKIP() << "set RPT_LANGUAGE_STRINGS to measure more languages";
  std::map<std::string, std::vector<std::string>> strings = held_out();
  std::vector<std::string> languages;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string code = entry.path().stem().string();
    languages.push_back(code);
    if (strings.contains(code)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) strings[code].push_back(line);
    }
  }
  std::sort(languages.begin(), languages.end());
  measure(strings, languages);
  for (const std::string& language : languages) {
    if (language != "en") measure(strings, {"en", language});
  }
}

TEST(LanguageDetectionTest, FallsBackToTheFirstCandidate) {
  EXPECT_TRUE(rank_languages({"Enregistrer le fichier"}, {}).empty());
  EXPECT_EQ(detect_language("Enregistrer le fichier", {}).language, "");
  // Nothing to detect: the first candidate, with no confidence.
  for (const std::string_view text : {"", "12345 !!!", "   ", "%1 / %2"}) {
    const LanguageGuess guess = detect_language(text, {"de", "fr"});
    EXPECT_EQ(guess.language, "de") << text;
    EXPECT_EQ(guess.confidence, 0.0) << text;
    EXPECT_EQ(rank_languages({text}, {"de", "fr"}).size(), 1u);
  }
  // A candidate CLD2 does not know is never detected; the others still are.
  EXPECT_EQ(detect_language("Enregistrer le fichier avant de quitter.", {"zt", "fr"}).language,
            "fr");
  EXPECT_EQ(detect_language("Enregistrer le fichier avant de quitter.", {"zt"}).language, "zt");
  EXPECT_EQ(detect_language("Enregistrer le fichier avant de quitter.", {"zt"}).confidence, 0.0);
  // Codes as the models spell them: regions and other cases are CLD2's languages.
  EXPECT_EQ(detect_language("Enregistrer le fichier avant de quitter.", {"en", "FR-ca"}).language,
            "FR-ca");
}

TEST(LanguageDetectionTest, ConfidenceFollowsTheEvidence) {
  const LanguageGuess clear =
      detect_language("Speichern Sie die Datei, bevor Sie das Fenster schließen.", {"en", "de"});
  EXPECT_EQ(clear.language, "de");
  EXPECT_GE(clear.confidence, 90.0);
  EXPECT_LE(clear.confidence, 100.0);
  // One short word: a best effort, and said so.
  EXPECT_LT(detect_language("Quit", {"en", "de"}).confidence, 70.0);
  // Every guess is a candidate, the best first.
  const std::vector<LanguageGuess> ranked = rank_languages(
      {"Open the file. Ouvrir le fichier et fermer la fenêtre principale maintenant."},
      {"en", "fr"});
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(ranked.front().language, "fr");
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    EXPECT_NE(ranked[i].language, ranked.front().language);
    EXPECT_LE(ranked[i].confidence, ranked.front().confidence);
  }
}

TEST(LanguageDetectionTest, SeveralTextsAreOneCall) {
  // Short strings alone are coin flips; together they are evidence.
  const std::vector<std::string_view> french = {"Quitter", "Ouvrir", "Enregistrer sous",
                                                "Fermer la fenêtre", "Annuler"};
  EXPECT_EQ(detect_language(french, {"en", "de", "fr"}).language, "fr");
  // The majority wins, and a long first text does not drown the others (each has its share).
  std::string long_english;
  while (long_english.size() < 100000) long_english += "Save the file before you quit. ";
  std::vector<std::string_view> mixed = {long_english};
  const std::string sentence = "Speichern Sie die Datei, bevor Sie das Programm beenden.";
  for (int i = 0; i < 40; ++i) mixed.push_back(sentence);
  EXPECT_EQ(detect_language(mixed, {"en", "de"}).language, "de");
}

TEST(LanguageDetectionTest, ReadsABoundedPrefix) {
  std::string french;
  while (french.size() < 8u << 20) french += "Enregistrer le fichier avant de fermer la fenêtre. ";
  std::string tail_english = french.substr(0, kMaxDetectedBytes - 3);
  while (tail_english.size() < 8u << 20) tail_english += "Save the file before you quit. ";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(detect_language(french, {"en", "fr"}).language, "fr");
  // Only the beginning counts: eight megabytes of English after it change nothing.
  EXPECT_EQ(detect_language(tail_english, {"en", "fr"}).language, "fr");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 0.5);  // a few hundred microseconds: nothing scans 16 MiB
  // The prefix is cut at a UTF-8 boundary: "é" (2 bytes) across the limit.
  std::string accented(kMaxDetectedBytes - 1, 'a');
  accented += "é fenêtre";
  EXPECT_FALSE(detect_language(accented, {"en", "fr"}).language.empty());
}

TEST(LanguageDetectionTest, InvalidUtf8EndsTheText) {
  std::string text = "Enregistrer le fichier avant de fermer la fenêtre principale.";
  text += "\xff\xfe";
  text += "Save the file before you close the main window of the program.";
  EXPECT_EQ(detect_language(text, {"en", "fr"}).language, "fr");
  EXPECT_EQ(detect_language("\xff\xfe\xfd", {"en", "fr"}).confidence, 0.0);
}

TEST(LanguageDetectionTest, MarkupIsSkipped) {
  const std::string html =
      "<div class=\"save-the-file-before-you-close-the-window\" title=\"Open the settings\">"
      "Enregistrer le fichier</div>";
  EXPECT_EQ(detect_language(html, {"en", "fr"}, DetectedText::kMarkup).language, "fr");
}

TEST(LanguageDetectionTest, ManyThreadsAtOnceAnswerAsOne) {
  std::vector<std::string> texts;
  if (have_data()) {
    for (const auto& [language, strings] : held_out()) {
      texts.insert(texts.end(), strings.begin(), strings.begin() + 300);
    }
  } else {
    texts = {"Save the file", "Datei speichern", "Enregistrer le fichier", "Quit", "Beenden"};
  }
  const std::vector<std::string> candidates = {"en", "de", "fr"};
  std::vector<LanguageGuess> alone;
  for (const std::string& text : texts) alone.push_back(detect_language(text, candidates));
  constexpr int kThreads = 8;
  std::vector<std::vector<LanguageGuess>> answers(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        answers[t].clear();
        for (const std::string& text : texts)
          answers[t].push_back(detect_language(text, candidates));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(answers[t].size(), alone.size());
    for (std::size_t i = 0; i < alone.size(); ++i) {
      EXPECT_EQ(answers[t][i].language, alone[i].language) << texts[i];
      EXPECT_EQ(answers[t][i].confidence, alone[i].confidence) << texts[i];
    }
  }
}

}  // namespace
}  // namespace rpt::server
