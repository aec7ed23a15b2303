// What counts as text: well-formed UTF-8, and "blank" text (nothing but whitespace, control and
// invisible format characters), which the server returns unchanged and the clients do not send.
// Header-only and dependency-free so that the clients, which do not link the engine, share the one
// definition with the server's request validation.
#pragma once

#include <cstddef>
#include <string_view>

namespace rpt {

// Decodes the code point at text[*i] and advances *i past it; false (and *i unchanged) when the
// bytes there are not well-formed UTF-8 (overlongs, surrogates, past U+10FFFF, truncated).
inline bool next_code_point(std::string_view text, std::size_t* i, char32_t* code_point) {
  const auto c = static_cast<unsigned char>(text[*i]);
  int extra = 0;
  char32_t code = 0;
  if (c < 0x80) {
    *code_point = c;
    ++*i;
    return true;
  } else if ((c & 0xE0) == 0xC0) {
    extra = 1;
    code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2;
    code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3;
    code = c & 0x07;
  } else {
    return false;  // a continuation byte or 0xF8..0xFF where a sequence must start
  }
  if (*i + static_cast<std::size_t>(extra) >= text.size()) return false;  // truncated
  for (int k = 1; k <= extra; ++k) {
    const auto next = static_cast<unsigned char>(text[*i + static_cast<std::size_t>(k)]);
    if ((next & 0xC0) != 0x80) return false;
    code = (code << 6) | (next & 0x3F);
  }
  static constexpr char32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return false;
  }
  *code_point = code;
  *i += static_cast<std::size_t>(extra) + 1;
  return true;
}

// True when `text` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view text) {
  char32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!next_code_point(text, &i, &code)) return false;
  }
  return true;
}

// The start of the code point that ends at text[at] (at > 0), and that code point in *c (0, and
// at - 1 returned, when the bytes before `at` are not well-formed UTF-8).
inline std::size_t previous_code_point(std::string_view text, std::size_t at, char32_t* c) {
  std::size_t begin = at - 1;
  while (begin > 0 && at - begin < 4 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) {
    --begin;
  }
  std::size_t i = begin;
  if (!next_code_point(text, &i, c) || i != at) {
    *c = 0;
    return at - 1;
  }
  return begin;
}

// Unicode White_Space, the C0/C1 controls, and the invisible format characters that carry no
// text on their own (zero-width space/joiners, word joiner, BOM, Mongolian vowel separator).
inline bool is_blank_code_point(char32_t c) {
  if (c <= 0x20 || (c >= 0x7F && c <= 0xA0)) return true;  // controls, space, NEL, NBSP
  if (c >= 0x2000 && c <= 0x200D) return true;             // en quad .. hair space, ZWSP, ZWNJ, ZWJ
  switch (c) {
    case 0x1680:
    case 0x180E:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x2060:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return false;
  }
}

// The position after the blank code points starting at `begin` (not beyond `end`).
inline std::size_t skip_blank(std::string_view text, std::size_t begin, std::size_t end) {
  std::size_t i = begin;
  while (i < end) {
    std::size_t next = i;
    char32_t c = 0;
    if (!next_code_point(text.substr(0, end), &next, &c) || !is_blank_code_point(c)) break;
    i = next;
  }
  return i;
}

// The position after the last code point in [begin, end) that is not blank (begin if none).
inline std::size_t trim_blank_end(std::string_view text, std::size_t begin, std::size_t end) {
  std::size_t last = begin;
  std::size_t i = begin;
  while (i < end) {
    char32_t c = 0;
    if (!next_code_point(text.substr(0, end), &i, &c)) {
      ++i;  // not UTF-8: a byte of text, never blank
      last = i;
    } else if (!is_blank_code_point(c)) {
      last = i;
    }
  }
  return last;
}

// True when `text` is empty or only blank code points. Text that is not valid UTF-8 is not
// blank (the server refuses it for that reason instead).
inline bool is_blank_text(std::string_view text) {
  char32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!next_code_point(text, &i, &code) || !is_blank_code_point(code)) return false;
  }
  return true;
}

}  // namespace rpt
