// md4c reports blocks as enter/leave events around runs of text, without offsets; the runs (a code
// block's lines too) and a fence's info string point into the caller's buffer, so they place the
// blocks. Text md4c makes up (a line's "\n", indentation kept inside a fenced block, a hard
// break) points elsewhere and is passed over.
#include "documents/markdown_blocks.h"

#include <md4c.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "documents/segmenter.h"

namespace rpt::documents {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

class Reader {
 public:
  Reader(std::string_view text, const MarkdownOptions& options) : text_(text), options_(options) {}

  MarkdownReading read() {
    MD_PARSER parser{};
    // A document's tables as GitHub's: else a table is one paragraph, its rows joined.
    parser.flags = MD_DIALECT_COMMONMARK | MD_FLAG_NOHTMLBLOCKS |
                   (options_.document ? static_cast<unsigned>(MD_FLAG_TABLES)
                                      : static_cast<unsigned>(MD_FLAG_NOINDENTEDCODEBLOCKS));
    parser.enter_block = [](MD_BLOCKTYPE type, void* detail, void* self) {
      auto& reader = *static_cast<Reader*>(self);
      reader.blocks_.push_back(reader.next_block_++);
      if (type == MD_BLOCK_CODE) reader.enter(*static_cast<MD_BLOCK_CODE_DETAIL*>(detail));
      if (type == MD_BLOCK_TD || type == MD_BLOCK_TH) reader.cell_ = {kNone, 0};
      return 0;
    };
    parser.leave_block = [](MD_BLOCKTYPE type, void*, void* self) {
      auto& reader = *static_cast<Reader*>(self);
      if (!reader.blocks_.empty()) reader.blocks_.pop_back();
      if (type == MD_BLOCK_CODE) reader.leave();
      if ((type == MD_BLOCK_TD || type == MD_BLOCK_TH) && reader.cell_.first != kNone) {
        reader.reading_.table_cells.push_back(reader.cell_);
      }
      return 0;
    };
    parser.enter_span = [](MD_SPANTYPE, void*, void*) { return 0; };
    parser.leave_span = [](MD_SPANTYPE, void*, void*) { return 0; };
    parser.text = [](MD_TEXTTYPE type, const MD_CHAR* run, MD_SIZE size, void* self) {
      static_cast<Reader*>(self)->text(type, run, size);
      return 0;
    };
    if (md_parse(text_.data(), static_cast<MD_SIZE>(text_.size()), &parser, this) != 0) return {};
    return std::move(reading_);
  }

 private:
  // The offset of `at` in the text, or kNone when md4c made it up.
  std::size_t offset(const MD_CHAR* at) const {
    if (at == nullptr || at < text_.data() || at >= text_.data() + text_.size()) return kNone;
    return static_cast<std::size_t>(at - text_.data());
  }

  std::size_t line_start(std::size_t at) const {
    while (at > 0 && text_[at - 1] != '\n' && text_[at - 1] != '\r') --at;
    return at;
  }

  std::size_t line_end(std::size_t at) const {
    while (at < text_.size() && text_[at] != '\n' && text_[at] != '\r') ++at;
    return at;
  }

  void enter(const MD_BLOCK_CODE_DETAIL& detail) {
    in_code_ = true;
    fenced_ = detail.fence_char != 0;
    info_ = detail.info.size > 0 ? offset(detail.info.text) : kNone;
    first_ = kNone;
    last_ = 0;
  }

  void text(MD_TEXTTYPE type, const MD_CHAR* run, MD_SIZE size) {
    const std::size_t at = offset(run);
    if (in_code_) {
      if (type != MD_TEXT_CODE || at == kNone || size == 0) return;
      first_ = std::min(first_, at);
      last_ = std::max(last_, at + size);
      return;
    }
    if (!options_.document) return;
    if (type == MD_TEXT_BR) {
      reading_.hard_breaks.push_back(last_text_end_);
    } else if (at != kNone && size > 0 && !blocks_.empty()) {
      reading_.texts.emplace_back(at, blocks_.back());
      last_text_end_ = at + size;
      cell_.first = std::min(cell_.first, at);
      cell_.second = std::max(cell_.second, at + size);
    }
  }

  void leave() {
    in_code_ = false;
    std::size_t begin = kNone;
    std::size_t end = 0;
    if (first_ != kNone) {
      begin = line_start(first_);
      end = line_end(last_ - 1);
      // The opening fence: the line before the first line of code.
      if (fenced_ && begin > 0) {
        begin = line_start(begin - (begin >= 2 && text_.substr(begin - 2, 2) == "\r\n" ? 2 : 1));
      }
    }
    if (fenced_ && info_ != kNone) {
      begin = std::min(begin, line_start(info_));
      end = std::max(end, line_end(info_));
    }
    if (begin != kNone && begin < end) reading_.code_blocks.emplace_back(begin, end);
  }

  std::string_view text_;
  const MarkdownOptions& options_;
  MarkdownReading reading_;
  std::vector<int> blocks_;  // the ids of the open blocks, innermost last
  int next_block_ = 0;
  std::size_t last_text_end_ = 0;
  std::pair<std::size_t, std::size_t> cell_{kNone, 0};  // the open table cell's text
  bool in_code_ = false;
  bool fenced_ = false;
  std::size_t info_ = kNone;
  std::size_t first_ = kNone;
  std::size_t last_ = 0;
};

// The end of the front matter opening `text` (Jekyll's and Hugo's YAML between "---" lines,
// Hugo's TOML between "+++" lines), or 0. md4c knows none: it read the keys as a heading's text.
std::size_t front_matter_end(std::string_view text) {
  const std::size_t bom = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  for (const std::string_view fence : {"---", "+++"}) {
    if (text.substr(bom, 3) != fence) continue;
    std::size_t at = bom + 3;
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    if (at < text.size() && text[at] == '\r') ++at;
    if (at >= text.size() || text[at] != '\n') continue;
    // The closing fence: a line of its own ("..." closes YAML too).
    for (std::size_t line = at + 1; line < text.size();) {
      std::size_t end = text.find('\n', line);
      if (end == std::string_view::npos) end = text.size();
      std::string_view content = text.substr(line, end - line);
      if (content.ends_with('\r')) content.remove_suffix(1);
      while (content.ends_with(' ') || content.ends_with('\t')) content.remove_suffix(1);
      if (content == fence || (fence == "---" && content == "...")) return end;
      line = end + 1;
    }
  }
  return 0;
}

// The HTML comments that are blocks of their own (CommonMark's HTML block that starts with
// "<!--" at a line's start and ends on the line of "-->"), as line ranges in text order: md4c
// with HTML blocks read. Not those in code blocks, nor comments inside a line of text.
std::vector<std::pair<std::size_t, std::size_t>> comment_blocks(std::string_view text,
                                                                const MarkdownOptions& options) {
  struct Blocks {
    std::string_view text;
    std::vector<std::pair<std::size_t, std::size_t>> found;
    bool in_html = false;
    std::size_t first = kNone;
    std::size_t last = 0;
  } blocks{text, {}};
  MD_PARSER parser{};
  parser.flags = MD_DIALECT_COMMONMARK | (options.document ? 0u : MD_FLAG_NOINDENTEDCODEBLOCKS);
  parser.enter_block = [](MD_BLOCKTYPE type, void*, void* self) {
    auto& b = *static_cast<Blocks*>(self);
    if (type == MD_BLOCK_HTML) {
      b.in_html = true;
      b.first = kNone;
      b.last = 0;
    }
    return 0;
  };
  parser.leave_block = [](MD_BLOCKTYPE type, void*, void* self) {
    auto& b = *static_cast<Blocks*>(self);
    if (type != MD_BLOCK_HTML) return 0;
    b.in_html = false;
    if (b.first == kNone) return 0;
    std::size_t begin = b.first;
    while (begin > 0 && b.text[begin - 1] != '\n' && b.text[begin - 1] != '\r') --begin;
    const std::string_view block = b.text.substr(b.first, b.last - b.first);
    const std::size_t end = block.rfind("-->");
    if (block.starts_with("<!--") && end != std::string_view::npos &&
        block.substr(end + 3).find_first_not_of(" \t\r\n") == std::string_view::npos) {
      b.found.emplace_back(begin, b.first + end + 3);
    }
    return 0;
  };
  parser.enter_span = [](MD_SPANTYPE, void*, void*) { return 0; };
  parser.leave_span = [](MD_SPANTYPE, void*, void*) { return 0; };
  parser.text = [](MD_TEXTTYPE, const MD_CHAR* run, MD_SIZE size, void* self) {
    auto& b = *static_cast<Blocks*>(self);
    if (!b.in_html || run < b.text.data() || run + size > b.text.data() + b.text.size()) return 0;
    const auto at = static_cast<std::size_t>(run - b.text.data());
    b.first = std::min(b.first, at);
    b.last = std::max(b.last, at + size);
    return 0;
  };
  if (md_parse(text.data(), static_cast<MD_SIZE>(text.size()), &parser, &blocks) != 0) return {};
  return std::move(blocks.found);
}

}  // namespace

MarkdownReading read_markdown(std::string_view text, const MarkdownOptions& options) {
  const bool comments = text.find("<!--") != std::string_view::npos;
  if (!options.document && !comments && text.find("```") == std::string_view::npos &&
      text.find("~~~") == std::string_view::npos) {
    return {};
  }
  MarkdownReading reading = Reader(text, options).read();
  if (comments) {
    auto& blocks = reading.code_blocks;
    const auto found = comment_blocks(text, options);
    blocks.insert(blocks.end(), found.begin(), found.end());
    std::sort(blocks.begin(), blocks.end());
  }
  if (options.document) {
    if (const std::size_t end = front_matter_end(text); end > 0) {
      reading.code_blocks.insert(reading.code_blocks.begin(), {0, end});
    }
  }
  return reading;
}

namespace {

// The cells of a table row `line`, from their texts (in order): each reaches out to the pipes
// around it, the text's delimiters ("**", "`") with it; a row need not open or close with one.
std::vector<ByteRange> cells_of_row(std::string_view text, ByteRange line,
                                    const std::vector<ByteRange>& texts) {
  std::vector<ByteRange> cells;
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const std::size_t gap_before = k == 0 ? line.first : texts[k - 1].second;
    const std::size_t gap_after = k + 1 == texts.size() ? line.second : texts[k + 1].first;
    const std::size_t pipe_before = text.substr(gap_before, texts[k].first - gap_before).rfind('|');
    const std::size_t pipe_after =
        text.substr(texts[k].second, gap_after - texts[k].second).find('|');
    cells.emplace_back(
        pipe_before == std::string_view::npos ? gap_before : gap_before + pipe_before + 1,
        pipe_after == std::string_view::npos ? gap_after : texts[k].second + pipe_after);
  }
  return cells;
}

}  // namespace

MarkdownLines markdown_lines(std::string_view text, const std::vector<ByteRange>& lines,
                             bool document) {
  const std::size_t n = lines.size();
  MarkdownLines out{std::vector<bool>(n, false), std::vector<bool>(n, false),
                    std::vector<std::vector<ByteRange>>(n)};
  const MarkdownReading reading = read_markdown(text, {.document = document});
  // The line holding offset `at`, for offsets given in text order (each walk starts at 0).
  std::size_t line = 0;
  const auto line_of = [&](std::size_t at) {
    while (line < n && lines[line].second < at) ++line;
    return line;
  };
  for (const auto& [first, last] : reading.code_blocks) {
    for (std::size_t i = line_of(first); i < n && lines[i].first < last; ++i) out.layout[i] = true;
  }
  // The leaf block of each line's first run of text (-1: none), the lines that end in a hard
  // break, and the cells of table rows.
  std::vector<int> block(n, -1);
  line = 0;
  for (const auto& [at, id] : reading.texts) {
    if (const std::size_t i = line_of(at); i < n && block[i] < 0) block[i] = id;
  }
  std::vector<bool> hard_break(n, false);
  line = 0;
  for (const std::size_t at : reading.hard_breaks) {
    if (const std::size_t i = line_of(at); i < n) hard_break[i] = true;
  }
  std::vector<std::vector<ByteRange>> cell_texts(n);
  line = 0;
  for (const ByteRange& cell : reading.table_cells) {
    const std::size_t i = line_of(cell.first);
    if (i < n && cell.second <= lines[i].second) cell_texts[i].push_back(cell);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!cell_texts[i].empty()) out.cells[i] = cells_of_row(text, lines[i], cell_texts[i]);
  }
  // A line md4c reads no text in that starts as a link reference definition does ("[label]:",
  // up to three blanks before) is one: its label and destination are the document's keys.
  for (std::size_t i = 0; i < n && document; ++i) {
    const std::string_view content = text.substr(lines[i].first, lines[i].second - lines[i].first);
    const std::size_t first = content.find_first_not_of(' ');
    if (block[i] < 0 && first != std::string_view::npos && first <= 3 && content[first] == '[' &&
        content.find("]:", first) != std::string_view::npos) {
      out.layout[i] = true;
    }
  }
  // A line goes on its paragraph unless a quotation's '>' opens it (joined, that marker would be
  // in the text the model reads) or one of the two has no words of its own: a term of a man
  // page's option list ("**--debug, -D**" above "Show additional information.") is no part of
  // the sentence below it, and read with it the model broke the emphasis and the option.
  std::vector<bool> words(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    words[i] =
        block[i] >= 0 && has_words(text.substr(lines[i].first, lines[i].second - lines[i].first));
  }
  for (std::size_t i = 1; i < n; ++i) {
    const std::string_view content = text.substr(lines[i].first, lines[i].second - lines[i].first);
    const std::size_t first = content.find_first_not_of(" \t");
    out.joins_previous[i] = block[i] >= 0 && block[i] == block[i - 1] && !hard_break[i - 1] &&
                            !out.layout[i] && !out.layout[i - 1] && words[i] && words[i - 1] &&
                            (first == std::string_view::npos || content[first] != '>');
  }
  return out;
}

}  // namespace rpt::documents
