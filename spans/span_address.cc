#include "spans/span_address.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "spans/span_format.h"

namespace rpt::spans {
namespace {

// Generic top-level domains that name web hosts (and few file types): the ones a bare host name
// (no path, no www.) may end in, and a host with a path besides any two-letter country code.
constexpr std::string_view kWebDomains[] = {"com",   "org",    "net",  "edu",  "gov", "int",
                                            "mil",   "info",   "biz",  "io",   "dev", "app",
                                            "cloud", "online", "site", "tech", "xyz"};

char lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_lower(std::string_view text, std::string_view lower_case) {
  if (text.size() != lower_case.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != lower_case[i]) return false;
  }
  return true;
}

bool is_web_domain(std::string_view label) {
  return std::any_of(std::begin(kWebDomains), std::end(kWebDomains),
                     [label](std::string_view domain) { return equals_lower(label, domain); });
}

// What a word is made of: printable ASCII but the characters that delimit an address in prose
// and markup.
bool in_word(char c) { return c > ' ' && c < 0x7F && std::strchr("<>\"`\\", c) == nullptr; }

bool is_label_char(char c) { return is_alpha(c) || is_digit(c) || c == '-'; }

// A host name at text[at]: labels of letters, digits and '-' joined by '.', at least two, the
// last (the top-level domain) of two or more letters. Its end, with whether it is all lower case
// and its top-level domain; end == at when there is none.
struct Host {
  std::size_t end = 0;
  bool lower_case = true;
  std::string_view top_level;
};

Host read_host(std::string_view text, std::size_t at, std::size_t limit) {
  Host host{at, true, {}};
  int labels = 0;
  std::size_t i = at;
  std::size_t host_end = at;
  while (i < limit) {
    const std::size_t label = i;
    while (i < limit && is_label_char(text[i])) {
      host.lower_case = host.lower_case && !is_upper(text[i]);
      ++i;
    }
    if (i == label || text[label] == '-' || text[i - 1] == '-') break;
    ++labels;
    host_end = i;
    host.top_level = text.substr(label, i - label);
    if (i + 1 >= limit || text[i] != '.' || !is_label_char(text[i + 1])) break;
    ++i;  // the dot
  }
  const bool letters = host.top_level.size() >= 2 &&
                       std::all_of(host.top_level.begin(), host.top_level.end(), is_alpha);
  if (labels >= 2 && letters) host.end = host_end;
  return host;
}

bool is_local_char(char c) { return is_ident(c) || c == '.' || c == '+' || c == '-'; }

bool is_scheme_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '+' || c == '.' || c == '-';
}

// The address in text[begin, end) (a word without its edge punctuation), or {0, 0}.
std::pair<std::size_t, std::size_t> address_in(std::string_view text, std::size_t begin,
                                               std::size_t end) {
  const std::string_view word = text.substr(begin, end - begin);
  // A URL with a scheme: its scheme starts at a letter after a character no scheme holds.
  if (const std::size_t slashes = word.find("://");
      slashes != std::string_view::npos && slashes + 3 < word.size()) {
    std::size_t scheme = begin + slashes;
    while (scheme > begin && is_scheme_char(text[scheme - 1])) --scheme;
    while (scheme < begin + slashes && !is_alpha(text[scheme])) ++scheme;
    if (scheme < begin + slashes) return {scheme, end};
  }
  if (word.size() > 4 && equals_lower(word.substr(0, 4), "www.") &&
      read_host(text, begin + 4, end).end > begin + 4) {
    return {begin, end};
  }
  // An e-mail address: the local part before the '@', the host after it.
  if (const std::size_t at = word.find('@'); at != std::string_view::npos && at > 0) {
    std::size_t local = begin + at;
    while (local > begin && is_local_char(text[local - 1])) --local;
    const Host host = read_host(text, begin + at + 1, end);
    if (local < begin + at && text[local] != '.' && text[begin + at - 1] != '.' &&
        host.end > begin + at + 1) {
      constexpr std::string_view kMailto = "mailto:";
      if (local >= begin + kMailto.size() &&
          equals_lower(text.substr(local - kMailto.size(), kMailto.size()), kMailto)) {
        local -= kMailto.size();
      }
      return {local, host.end};
    }
    return {0, 0};
  }
  const Host host = read_host(text, begin, end);
  if (host.end == begin) return {0, 0};
  std::size_t after = host.end;
  if (after < end && text[after] == ':') {  // a port
    std::size_t digits = after + 1;
    while (digits < end && is_digit(text[digits])) ++digits;
    if (digits > after + 1) after = digits;
  }
  if (after < end && text[after] == '/') {
    return host.top_level.size() == 2 || is_web_domain(host.top_level)
               ? std::make_pair(begin, end)
               : std::make_pair(std::size_t{0}, std::size_t{0});
  }
  if (after == end && host.lower_case && is_web_domain(host.top_level)) return {begin, end};
  return {0, 0};
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> find_addresses(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> addresses;
  if (text.find_first_of(".@]") == std::string_view::npos) return addresses;
  for (std::size_t i = 0; i < text.size();) {
    if (!in_word(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && in_word(text[end])) ++end;
    const std::size_t word_end = end;
    // A Markdown link's or image's destination, whatever it names: [the manual](setup.md),
    // ![Logo](logo.png) (which the demo models wrote as "![Logo](logogo](logo.png)").
    const std::size_t link = text.substr(i, end - i).find("](");
    if (link != std::string_view::npos) {
      const std::size_t destination = i + link + 2;
      const std::size_t close = text.substr(destination, end - destination).find(')');
      if (close != std::string_view::npos && close > 0) {
        addresses.emplace_back(destination, destination + close);
        i = destination + close;
        continue;
      }
    }
    std::size_t begin = i;
    while (begin < end && std::strchr("([{'*", text[begin]) != nullptr) ++begin;
    // A closing bracket the address opened stays: example.org/wiki/Rust_(language). The
    // brackets of word[begin, end), counted once and kept as the end moves: "x}}}}...}" is one
    // word, and counting again at each '}' was quadratic (a megabyte of nested ICU braces).
    int brackets[128] = {};
    for (std::size_t k = begin; k < end; ++k) ++brackets[static_cast<unsigned char>(text[k])];
    while (end > begin && std::strchr(".,;:!?)]}'*", text[end - 1]) != nullptr) {
      const char c = text[end - 1];
      const char open = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '\0';
      if (open != '\0' && brackets[static_cast<unsigned char>(open)] >
                              brackets[static_cast<unsigned char>(c)] - 1) {
        break;
      }
      --brackets[static_cast<unsigned char>(c)];
      --end;
    }
    if (end > begin) {
      auto address = address_in(text, begin, end);
      // Angle brackets around the whole address are its own (a Markdown autolink, "Name
      // <user@example.com>"): the models dropped them or wrote the address after the sentence.
      if (address.first == i && address.second == word_end && i > 0 && text[i - 1] == '<' &&
          word_end < text.size() && text[word_end] == '>') {
        address = {i - 1, word_end + 1};
      }
      if (address.second > address.first) addresses.push_back(address);
    }
    i = word_end;
  }
  return addresses;
}

}  // namespace rpt::spans
