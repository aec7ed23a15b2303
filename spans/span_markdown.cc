// find_markdown_pairs: md4c parses the text and reports emphasis and links as enter/leave events
// between runs of text, without offsets; the runs of text point into the caller's buffer, so the
// delimiters of the events between two runs lie in the bytes between them (the gap). There, the
// closers of the spans that end come first, each right after what it closes (a link's "](dest)"
// ends after the destination's and title's pointers), and the openers of the spans that begin
// come last, each right before what it opens (only "`" or "<" of nested spans between). So
// closers are read forward from the gap's start, openers backward from its end.
#include "spans/span_markdown.h"

#include <md4c.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "spans/span_format.h"

namespace rpt::spans {
namespace {

constexpr std::size_t kUnplaced = std::numeric_limits<std::size_t>::max();

bool is_delimiter(char c) { return c == '*' || c == '_'; }
// ASCII punctuation, as CommonMark reads it.
bool is_punct(char c) { return c > ' ' && c < 0x7F && !is_alpha(c) && !is_digit(c); }
bool is_emphasis(MD_SPANTYPE type) { return type == MD_SPAN_EM || type == MD_SPAN_STRONG; }
bool is_link(MD_SPANTYPE type) { return type == MD_SPAN_A || type == MD_SPAN_IMG; }

// The delimiters of one event: an emphasis run's length from the span's type, a link's from
// where its brackets stand; the place once found.
struct Marker {
  std::size_t begin = kUnplaced;
  std::size_t end = kUnplaced;
  std::size_t length = 0;  // for emphasis
};

// A span event since the last run of text.
struct Event {
  bool enter = false;
  MD_SPANTYPE type = MD_SPAN_EM;
  int marker = -1;  // for emphasis and links: index into Reader::markers
  // For leaving a link or image: where its destination and title end in the text, and whether
  // they are all there (an escaped destination is a copy; a reference link's is elsewhere).
  std::size_t link_end = 0;
  bool has_link = false;
  bool link_placed = true;
};

class Reader {
 public:
  // `buffer`: the text, then what find_markdown_pairs appended (definitions for its reference
  // links); pairs are looked for in the text's `size` bytes.
  Reader(std::string_view buffer, std::size_t size) : text_(buffer), size_(size) {}

  std::vector<MarkdownPair> read() {
    MD_PARSER parser{};
    parser.flags = MD_DIALECT_COMMONMARK | MD_FLAG_NOINDENTEDCODEBLOCKS | MD_FLAG_NOHTMLBLOCKS;
    parser.enter_block = [](MD_BLOCKTYPE, void*, void*) { return 0; };
    parser.leave_block = [](MD_BLOCKTYPE, void*, void*) { return 0; };
    parser.enter_span = [](MD_SPANTYPE type, void*, void* self) {
      static_cast<Reader*>(self)->enter(type);
      return 0;
    };
    parser.leave_span = [](MD_SPANTYPE type, void* detail, void* self) {
      static_cast<Reader*>(self)->leave(type, detail);
      return 0;
    };
    parser.text = [](MD_TEXTTYPE, const MD_CHAR* run, MD_SIZE size, void* self) {
      static_cast<Reader*>(self)->text(run, size);
      return 0;
    };
    if (md_parse(text_.data(), static_cast<MD_SIZE>(text_.size()), &parser, this) != 0) return {};
    place(size_);
    return pairs();
  }

 private:
  void enter(MD_SPANTYPE type) {
    Event event{.enter = true, .type = type};
    if (is_emphasis(type) || is_link(type)) {
      event.marker = static_cast<int>(markers_.size());
      markers_.push_back({.length = type == MD_SPAN_EM ? 1u : 2u});
    }
    open_.push_back(event);
    events_.push_back(event);
  }

  void leave(MD_SPANTYPE type, void* detail) {
    // md4c 0.4.8 may enter an emphasis it never leaves (*[x](u*y)*): what it left open is no pair.
    auto it = std::find_if(open_.rbegin(), open_.rend(),
                           [type](const Event& open) { return open.type == type; });
    if (it == open_.rend()) return;
    const int opener = it->marker;
    open_.erase(std::next(it).base(), open_.end());
    Event event{.enter = false, .type = type};
    if (opener >= 0) {
      event.marker = static_cast<int>(markers_.size());
      markers_.push_back({.length = markers_[static_cast<std::size_t>(opener)].length});
      pairs_.emplace_back(opener, event.marker);
    }
    if (type == MD_SPAN_A) {
      const auto* link = static_cast<const MD_SPAN_A_DETAIL*>(detail);
      link_end(link->href, &event);
      link_end(link->title, &event);
    } else if (type == MD_SPAN_IMG) {
      const auto* image = static_cast<const MD_SPAN_IMG_DETAIL*>(detail);
      link_end(image->src, &event);
      link_end(image->title, &event);
    }
    events_.push_back(event);
  }

  void link_end(const MD_ATTRIBUTE& attribute, Event* event) const {
    if (attribute.size == 0) return;
    event->has_link = true;
    if (attribute.text < text_.data() || attribute.text > text_.data() + text_.size()) {
      event->link_placed = false;
      return;
    }
    const auto end = static_cast<std::size_t>(attribute.text - text_.data()) + attribute.size;
    event->link_end = std::max(event->link_end, end);
  }

  void text(const MD_CHAR* run, MD_SIZE size) {
    // Line breaks and NUL characters come as md4c's own strings: part of the gap.
    if (run < text_.data() || run >= text_.data() + size_) return;
    const auto begin = static_cast<std::size_t>(run - text_.data());
    if (begin < text_end_) {  // never seen: text out of order leaves its gap's events unplaced
      events_.clear();
      return;
    }
    place(begin);
    text_end_ = begin + size;
  }

  // Places the delimiters of the events in the gap [text_end_, next).
  void place(std::size_t next) {
    const std::size_t leaving = static_cast<std::size_t>(
        std::find_if(events_.begin(), events_.end(), [](const Event& e) { return e.enter; }) -
        events_.begin());
    // Closers, then openers; anything else (an empty link, "*[](u)*") is not read.
    const bool ordered = std::all_of(events_.begin() + static_cast<long>(leaving), events_.end(),
                                     [](const Event& e) { return e.enter; });
    if (ordered) {
      std::size_t at = text_end_;
      bool lost = false;
      for (std::size_t i = 0; i < leaving && !lost; ++i) {
        const Event& event = events_[i];
        if (is_link(event.type)) {
          lost = !event.link_placed || !place_link_closer(event, &at, next);
        } else if (event.marker >= 0) {
          while (at < next && !is_delimiter(text_[at])) ++at;
          lost = !place_run(event.marker, at, next);
          if (!lost) at = markers_[static_cast<std::size_t>(event.marker)].end;
        }
      }
      const std::size_t floor = lost ? text_end_ : at;
      at = next;
      for (std::size_t i = events_.size(); i > leaving && !lost; --i) {
        const Event& event = events_[i - 1];
        if (event.marker < 0) continue;
        if (is_link(event.type)) {
          lost = !place_link_opener(event, &at, floor);
          continue;
        }
        while (at > floor && !is_delimiter(text_[at - 1])) --at;
        const std::size_t length = markers_[static_cast<std::size_t>(event.marker)].length;
        lost = at < floor + length || !place_run(event.marker, at - length, at);
        if (!lost) at -= length;
      }
    }
    events_.clear();
  }

  // Places a marker at text_[at], when a run of its length of one delimiter ends by `limit`.
  bool place_run(int index, std::size_t at, std::size_t limit) {
    Marker& marker = markers_[static_cast<std::size_t>(index)];
    if (at + marker.length > limit || !is_delimiter(text_[at])) return false;
    for (std::size_t i = 1; i < marker.length; ++i) {
      if (text_[at + i] != text_[at]) return false;
    }
    marker.begin = at;
    marker.end = at + marker.length;
    return true;
  }

  // Places a link's closer, the "]" at or after *at (after a code span's or autolink's closer),
  // before `limit`, and moves *at past it: an inline link's through the ")" after its destination
  // and title, a reference link's through its label's "]" ("][label]", "][]"). A shortcut
  // reference ("[label]") is not placed: the text alone does not say it is a link.
  bool place_link_closer(const Event& event, std::size_t* at, std::size_t limit) {
    while (*at < limit && text_[*at] != ']' && !is_delimiter(text_[*at])) ++*at;
    if (*at + 1 >= limit || text_[*at] != ']') return false;
    std::size_t close = std::string_view::npos;
    if (text_[*at + 1] == '(') {
      if (event.has_link && (event.link_end < text_end_ || event.link_end > limit)) return false;
      close = text_.substr(0, limit).find(')', std::max(*at + 2, event.link_end));
    } else if (text_[*at + 1] == '[') {
      close = text_.substr(0, limit).find(']', *at + 2);
    }
    if (close == std::string_view::npos) return false;
    Marker& marker = markers_[static_cast<std::size_t>(event.marker)];
    marker.begin = *at;
    marker.end = close + 1;
    *at = marker.end;
    return true;
  }

  // Places a link's opener, "[" (an image's "![") ending at *at, after nested openers and code
  // or autolink openers ("[`a`](u)", "[<b>x</b>](u)") and not before `floor`; moves *at to it.
  bool place_link_opener(const Event& event, std::size_t* at, std::size_t floor) {
    while (*at > floor && text_[*at - 1] != '[') {
      if (is_delimiter(text_[*at - 1])) return false;  // an opener of emphasis outside
      --*at;
    }
    if (*at == floor) return false;
    std::size_t begin = *at - 1;
    if (event.type == MD_SPAN_IMG) {
      if (begin == floor || text_[begin - 1] != '!') return false;
      --begin;
    }
    Marker& marker = markers_[static_cast<std::size_t>(event.marker)];
    marker.begin = begin;
    marker.end = *at;
    *at = begin;
    return true;
  }

  std::vector<MarkdownPair> pairs() const {
    std::vector<MarkdownPair> found;
    for (const auto& [opener, closer] : pairs_) {
      const Marker& open = markers_[static_cast<std::size_t>(opener)];
      const Marker& close = markers_[static_cast<std::size_t>(closer)];
      if (open.begin == kUnplaced || close.begin == kUnplaced || open.end > close.begin) continue;
      const bool emphasis = is_delimiter(text_[open.begin]);
      if (emphasis && text_[open.begin] != text_[close.begin]) continue;
      const std::string_view closing = text_.substr(close.begin, close.end - close.begin);
      const bool collapsed = closing.starts_with("][") &&
                             closing.find_first_not_of(" \t\r\n", 2) == closing.size() - 1;
      found.push_back({open.begin, open.end, close.begin, close.end, collapsed});
    }
    std::sort(found.begin(), found.end(), [](const MarkdownPair& a, const MarkdownPair& b) {
      return a.open_begin < b.open_begin;
    });
    // Emphasis opens on a word, code, a tag or a link (or another opener: ***x***).
    std::vector<MarkdownPair> kept;
    for (const MarkdownPair& pair : found) {
      if (!is_delimiter(text_[pair.open_begin])) {
        kept.push_back(pair);
        continue;
      }
      std::size_t after = pair.open_end;
      for (auto next = std::lower_bound(
               found.begin(), found.end(), after,
               [](const MarkdownPair&p, std::size_t offset) { return p.open_begin < offset; });
           next != found.end() && next->open_begin == after; ++next) {
        after = next->open_end;
      }
      // A command-line option is emphasized text ("**--format**", "*-v*"): man pages in
      // Markdown write their options so.
      const std::string_view rest = text_.substr(after);
      const bool option = rest.starts_with("--") || (rest.size() >= 2 && rest[0] == '-' &&
                                                     (is_alpha(rest[1]) || is_digit(rest[1])));
      if (after < text_.size() && is_punct(text_[after]) && !option &&
          std::string_view("`<[").find(text_[after]) == std::string_view::npos) {
        continue;
      }
      kept.push_back(pair);
    }
    return kept;
  }

  std::string_view text_;
  std::size_t size_ = 0;
  std::size_t text_end_ = 0;   // the end of the last run of text inside text_
  std::vector<Event> events_;  // span events since that run
  std::vector<Event> open_;    // spans entered and not left
  std::vector<Marker> markers_;
  std::vector<std::pair<int, int>> pairs_;  // opener and closer markers
};

// The text as md4c is given it: a Hugo shortcode's bytes (a span of their own) read as letters,
// so that a link destination holding one is a destination ("[the releases]({{< param repo
// >}}/releases)": its blanks made it none, and the models translated "/releases"); and a
// definition after it for each label of a reference link ("[text][label]", "[text][]"), whose
// own definition is elsewhere in the document: md4c reads only what it can resolve as a link.
// The labels' definitions point nowhere ("#"); a link's closer is found by its brackets. Empty
// when nothing needs changing.
std::string as_parsed(std::string_view text) {
  std::string buffer;
  if (text.find("{{") != std::string_view::npos) {
    for (std::size_t at = text.find("{{"); at != std::string_view::npos;
         at = text.find("{{", at + 1)) {
      const std::size_t length = template_tag_length(text, at);
      if (length == 0) continue;
      if (buffer.empty()) buffer = text;
      buffer.replace(at, length, length, 'x');
      at += length - 1;
    }
  }
  if (text.find("][") == std::string_view::npos) return buffer;
  if (buffer.empty()) buffer = text;
  for (std::size_t at = text.find("]["); at != std::string_view::npos;
       at = text.find("][", at + 2)) {
    const std::size_t end = text.find(']', at + 2);
    if (end == std::string_view::npos) break;
    std::string_view label = text.substr(at + 2, end - at - 2);
    if (label.find_first_not_of(" \t\r\n") == std::string_view::npos) {  // "[text][]"
      const std::size_t open = text.rfind('[', at);
      if (open == std::string_view::npos) continue;
      label = text.substr(open + 1, at - open - 1);
    }
    // CommonMark: at most 999 bytes, something other than blank, no unescaped bracket.
    if (label.size() > 999 || label.find_first_of("[]") != std::string_view::npos ||
        label.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      continue;
    }
    buffer.append("\n\n[").append(label).append("]: #\n");
  }
  return buffer;
}

}  // namespace

std::vector<MarkdownPair> find_markdown_pairs(std::string_view text) {
  if ((text.find_first_of("*_") == std::string_view::npos &&
       text.find("](") == std::string_view::npos && text.find("][") == std::string_view::npos) ||
      text.size() > std::numeric_limits<MD_SIZE>::max() / 2) {
    return {};
  }
  const std::string buffer = as_parsed(text);
  if (buffer.empty()) return Reader(text, text.size()).read();
  if (buffer.size() > std::numeric_limits<MD_SIZE>::max()) return {};
  return Reader(buffer, text.size()).read();
}

}  // namespace rpt::spans
