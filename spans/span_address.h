// The address recognizer behind find_protected_spans (spans/protected_spans.h): web and mail
// addresses, which a model reads as words and translates ("example.com/a.b" came back as
// "Beispiel.com/a.B"). Internal to spans/. One pass over the text's words (runs of printable
// ASCII but < > " ` \), each read a few times at most: linear.
//
// An address is, in a word with its edge punctuation ( [ ' * before and . , ; : ! ? ) ] ' *
// after left out:
//   - a URL with a scheme: https://example.com/a?b=c, file:///tmp/x, ftp://host (the scheme
//     starting at a letter after a non-scheme character: the "https" of url=https://x);
//   - www. and a host: www.example.com, www.example.org/help;
//   - an e-mail address: user.name+tag@example.co.uk, mailto:user@example.com;
//   - a host name and a path or a port: example.com/a.b, docs.example.org:8080/x, when its last
//     label is a top-level domain of two letters or one of kWebDomains; without a path only a host
//     in lower case ending in one of kWebDomains: example.com, rpt.dev.
//   - a Markdown link's or image's destination, whatever it is: the setup.md of
//     [the manual](setup.md), the logo.png of ![Logo](logo.png).
// An address with nothing but angle brackets around it takes them: <user@example.com>,
// <https://example.com> (Markdown's autolinks, a mail's "Name <user@example.com>").
// Not addresses: e.g. i.e. v1.2.3 1.5/2 config.txt README.md Node.js file.Open and/or.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace rpt::spans {

// Byte ranges [first, second) of the addresses of `text`, in text order, not overlapping.
std::vector<std::pair<std::size_t, std::size_t>> find_addresses(std::string_view text);

}  // namespace rpt::spans
