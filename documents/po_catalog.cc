// gettext PO/POT catalogues, read and written by gettext's own libgettextpo: what rpt changes is
// the msgstr of the entries it translates, their fuzzy flag, and the header fields a translated
// catalogue needs (Language, Content-Type, Plural-Forms, X-Generator); the writer prints every
// entry as msgcat would.
#include "documents/po_catalog.h"

#include <gettext-po.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/text_hygiene.h"
#include "documents/c_format_order.h"
#include "documents/plural_forms.h"
#include "documents/translation_count.h"
#include "spans/protected_spans.h"

namespace rpt::documents {
namespace {

// libgettextpo reports errors through handlers it keeps in globals: one call at a time.
std::mutex gettextpo_mutex;

// The errors of the libgettextpo call in progress (guarded by gettextpo_mutex).
struct ErrorLog {
  std::vector<std::string> errors;
  void add(int severity, std::size_t line, const char* message) {
    if (severity == PO_SEVERITY_WARNING) return;
    std::string entry = line == static_cast<std::size_t>(-1) || line == 0
                            ? std::string(message)
                            : "line " + std::to_string(line) + ": " + message;
    while (!entry.empty() && entry.back() == '\n') entry.pop_back();
    errors.push_back(std::move(entry));
  }
  std::string summary() const {
    std::string text;
    for (std::size_t i = 0; i < errors.size() && i < 3; ++i) text += (i ? "; " : "") + errors[i];
    if (errors.size() > 3) text += "; and " + std::to_string(errors.size() - 3) + " more";
    return text;
  }
};
ErrorLog* current_log = nullptr;

void on_error(int severity, po_message_t, const char*, std::size_t line, std::size_t, int,
              const char* message) {
  current_log->add(severity, line, message);
  // gettext requires a fatal error's handler not to return; the exception unwinds to parse or
  // render (x86-64 C code carries unwind tables).
  if (severity == PO_SEVERITY_FATAL_ERROR) throw CatalogError("PO: " + current_log->summary());
}

void on_error2(int severity, po_message_t, const char*, std::size_t line, std::size_t, int,
               const char* message, po_message_t, const char*, std::size_t other_line, std::size_t,
               int, const char* other_message) {
  std::string both = std::string(message) + " (" + other_message;
  if (other_line != static_cast<std::size_t>(-1)) both += " at line " + std::to_string(other_line);
  on_error(severity, nullptr, nullptr, line, 0, 0, (both + ")").c_str());
}

po_xerror_handler error_handler{on_error, on_error2};

// Holds the lock and the error log for one libgettextpo session.
class GettextSession {
 public:
  GettextSession() : lock_(gettextpo_mutex) { current_log = &log_; }
  ~GettextSession() { current_log = nullptr; }
  GettextSession(const GettextSession&) = delete;
  GettextSession& operator=(const GettextSession&) = delete;
  ErrorLog& log() { return log_; }

 private:
  std::lock_guard<std::mutex> lock_;
  ErrorLog log_;
};

// libgettextpo reads and writes files by name: the bytes live in an anonymous memory file
// (no temporary file on disk, a read-only root filesystem works).
class MemoryFile {
 public:
  explicit MemoryFile(std::string_view bytes) : fd_(memfd_create("rpt-catalog", MFD_CLOEXEC)) {
    if (fd_ < 0) throw CatalogError(std::string("PO: memfd_create: ") + std::strerror(errno));
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw CatalogError(std::string("PO: write: ") + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  std::string contents() const {
    std::string bytes;
    char buffer[1 << 16];
    for (off_t offset = 0;;) {
      const ssize_t n = ::pread(fd_, buffer, sizeof buffer, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CatalogError(std::string("PO: read: ") + std::strerror(errno));
      if (n == 0) return bytes;
      bytes.append(buffer, static_cast<std::size_t>(n));
      offset += n;
    }
  }

 private:
  int fd_;
};

using PoFile = std::unique_ptr<std::remove_pointer_t<po_file_t>, decltype(&po_file_free)>;

PoFile read_po(std::string_view bytes, ErrorLog& log) {
  // rpt writes UTF-8, and gettext's writer aborts the process on a string that is not valid in
  // the file's charset (found by tests/fuzz/catalog_fuzz.cc): the whole file is checked first.
  if (!is_valid_utf8(bytes)) {
    throw CatalogError("PO: the file is not valid UTF-8 (convert it: msgconv -t UTF-8)");
  }
  // gettext's reader ends a line's string at a NUL, so what follows it is lost, and a comment cut
  // before its newline can end in a backslash that, written back, joins the next line to it
  // (found by the fuzzer: "#: a\<NUL>..." came back as "#: a\" + "msgctxt ...", a duplicate).
  if (const std::size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    const auto line = 1 + std::count(bytes.begin(), bytes.begin() + static_cast<long>(nul), '\n');
    throw CatalogError("PO: line " + std::to_string(line) + " holds a NUL byte");
  }
  MemoryFile file(bytes);
  PoFile po(po_file_read(file.path().c_str(), &error_handler), &po_file_free);
  if (!po || !log.errors.empty()) {
    throw CatalogError("PO: " +
                       (log.errors.empty() ? std::string("cannot be read") : log.summary()));
  }
  return po;
}

// Calls visit(message) for every message of every domain, in file order.
void for_each_message(po_file_t file, const std::function<void(po_message_t)>& visit) {
  for (const char* const* domain = po_file_domains(file); *domain; ++domain) {
    po_message_iterator_t iterator = po_message_iterator(file, *domain);
    while (po_message_t message = po_next_message(iterator)) visit(message);
    po_message_iterator_free(iterator);
  }
}

bool is_header(po_message_t message) {
  return *po_message_msgid(message) == '\0' && po_message_msgctxt(message) == nullptr;
}

bool has_translation(po_message_t message) {
  if (po_message_msgid_plural(message) == nullptr) return *po_message_msgstr(message) != '\0';
  for (int i = 0;; ++i) {
    const char* form = po_message_msgstr_plural(message, i);
    if (form == nullptr) return false;
    if (*form != '\0') return true;
  }
}

std::optional<std::string> header_field(const char* header, const char* field) {
  char* value = header ? po_header_field(header, field) : nullptr;
  if (value == nullptr) return std::nullopt;
  std::string copy(value);
  std::free(value);
  return copy;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "text/plain; charset=UTF-8" -> "utf-8"; "" when none.
std::string charset_of(const std::optional<std::string>& content_type) {
  if (!content_type) return "";
  const std::string lower = lowercase(*content_type);
  const std::size_t at = lower.find("charset=");
  if (at == std::string::npos) return "";
  std::string charset = lower.substr(at + 8);
  return charset.substr(0, charset.find_first_of(" ;\t"));
}

// The format directives of a text (the spans a translation must carry): a form that serves more
// than n == 1 must have the plural's, so the singular's translation fits it only when they match.
std::multiset<std::string> directives(std::string_view text) {
  std::multiset<std::string> found;
  for (const ProtectedSpan& span : find_argument_spans(text, {.accelerators = false})) {
    if (span.kind == SpanKind::kPrintf || span.kind == SpanKind::kPositional ||
        span.kind == SpanKind::kBrace || span.kind == SpanKind::kVariable) {
      found.emplace(text.substr(span.begin, span.end - span.begin));
    }
  }
  return found;
}

struct PendingEntry {
  std::size_t message = 0;  // index in for_each_message order
  std::size_t text = 0;     // its msgid's index in texts(); the msgid_plural's follows
  bool plural = false;
  bool singular_fits_plural_forms = false;  // same directives: any form may take the singular
};

// How a plural entry's forms are filled: the singular's translation for the form n == 1 selects
// (when that form is n == 1's alone, or the directives match), the plural's for the others.
struct PluralPlan {
  int nplurals = 2;
  int form_of_one = 0;
  bool one_only = true;
  std::string header_value;  // Plural-Forms to write; empty: the header's own is kept
};

class PoCatalog : public Catalog {
 public:
  PoCatalog(std::string_view bytes, const CatalogOptions& options)
      : source_(bytes), options_(options) {
    GettextSession session;
    PoFile file = read_po(source_, session.log());
    std::size_t index = 0;
    bool any_plural = false;
    for_each_message(file.get(), [&](po_message_t message) {
      const std::size_t position = index++;
      if (is_header(message)) {
        check_header(po_message_msgstr(message));
        return;
      }
      if (po_message_is_obsolete(message)) return;
      ++stats_.entries;
      if (has_translation(message) && !(options_.translate_fuzzy && po_message_is_fuzzy(message))) {
        ++stats_.already_translated;
        return;
      }
      PendingEntry entry{position, texts_.size(), po_message_msgid_plural(message) != nullptr};
      add_text(po_message_msgid(message));
      if (entry.plural) {
        add_text(po_message_msgid_plural(message));
        entry.singular_fits_plural_forms =
            directives(po_message_msgid(message)) == directives(po_message_msgid_plural(message));
        ++stats_.plural_entries;
        any_plural = true;
      }
      pending_.push_back(entry);
      ++stats_.to_translate;
      if (stats_.to_translate > static_cast<int>(options_.max_entries)) {
        throw CatalogError("PO: more than " + std::to_string(options_.max_entries) +
                           " entries to translate");
      }
    });
    if (any_plural) plan_plurals(file.get());
  }

  const std::vector<CatalogText>& texts() const override { return texts_; }
  const CatalogStats& stats() const override { return stats_; }

  std::string render(const std::vector<std::string>& translations) const override {
    require_translation_count("PO", translations.size(), texts_.size(), "texts");
    GettextSession session;
    PoFile file = read_po(source_, session.log());
    if (pending_.empty()) return write(file.get(), session.log());
    std::size_t index = 0;
    auto next = pending_.begin();
    bool has_header = false;
    for_each_message(file.get(), [&](po_message_t message) {
      const std::size_t position = index++;
      if (is_header(message)) {
        update_header(message);
        has_header = true;
      } else if (next != pending_.end() && next->message == position) {
        fill(message, *next++, translations);
      }
    });
    // A file without a header would be written in no charset (gettext then refuses UTF-8
    // translations): it gets one, first, as msginit would write it.
    if (!has_header) add_header(file.get());
    return write(file.get(), session.log());
  }

 private:
  void add_text(const char* text) { texts_.push_back({text, TextFormat::kText}); }

  void check_header(const char* header) {
    const std::string charset = charset_of(header_field(header, "Content-Type"));
    if (!charset.empty() && charset != "utf-8" && charset != "charset" && charset != "ascii" &&
        charset != "us-ascii") {
      throw CatalogError("PO: the catalogue's charset is " + charset +
                         "; rpt reads UTF-8 (convert it: msgconv -t UTF-8)");
    }
    const std::optional<std::string> language = header_field(header, "Language");
    if (language && !language->empty() &&
        !same_primary_language(*language, options_.target_language)) {
      throw CatalogError("PO: the catalogue's Language is " + *language + ", the target is " +
                         options_.target_language);
    }
  }

  void plan_plurals(po_file_t file) {
    // po_file_domain_header returns a copy the caller frees.
    const std::unique_ptr<char, decltype(&std::free)> header(
        const_cast<char*>(po_file_domain_header(file, nullptr)), &std::free);
    const std::optional<std::string> forms = header_field(header.get(), "Plural-Forms");
    const std::size_t count_at = forms ? forms->find("nplurals=") : std::string::npos;
    const std::size_t rule_at = forms ? forms->find("plural=", count_at + 9) : std::string::npos;
    int nplurals = 0;
    if (count_at != std::string::npos) {
      const char* digits = forms->data() + count_at + 9;
      while (*digits == ' ' || *digits == '\t') ++digits;  // gettext skips spaces here too
      const auto [end, error] = std::from_chars(digits, forms->data() + forms->size(), nplurals);
      // Not a number: a template's "nplurals=INTEGER" placeholder, the language's rule applies.
      // A header claiming thousands of forms would make every plural entry that many strings.
      if (error == std::errc::invalid_argument) {
        nplurals = 0;
      } else if (error != std::errc() || nplurals < 1 || nplurals > kMaxPluralForms) {
        throw CatalogError("PO: the header's Plural-Forms gives nplurals='" +
                           forms->substr(count_at + 9, 12) + "'; expected 1 to " +
                           std::to_string(kMaxPluralForms));
      }
    }
    if (nplurals > 0 && rule_at != std::string::npos) {  // the header's own rule
      std::string expression = forms->substr(rule_at + 7);
      expression = expression.substr(0, expression.find(';'));
      const PluralRule* known = plural_rule_matching(nplurals, expression);
      // An expression the table does not know: form 0 for n == 1, perhaps shared with others.
      plurals_ = {nplurals, known ? known->form_of_one : 0, known && known->one_only, ""};
      return;
    }
    const PluralRule* rule = plural_rule_for(options_.target_language);
    if (rule == nullptr) {
      throw CatalogError("PO: no plural rule known for '" + options_.target_language +
                         "': give the header a Plural-Forms line (msginit writes one)");
    }
    plurals_ = {rule->nplurals, rule->form_of_one, rule->one_only, plural_forms_header(*rule)};
  }

  void add_header(po_file_t file) const {
    po_message_t header = po_message_create();
    po_message_set_msgid(header, "");
    po_message_set_msgstr(header,
                          "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
                          "Content-Transfer-Encoding: 8bit\n");
    update_header(header);
    po_message_iterator_t iterator = po_message_iterator(file, nullptr);
    po_message_insert(iterator, header);  // before the first message
    po_message_iterator_free(iterator);
  }

  void update_header(po_message_t header) const {
    std::string value = po_message_msgstr(header);
    auto set = [&value](const char* field, const std::string& to) {
      char* updated = po_header_set_field(value.c_str(), field, to.c_str());
      value = updated;
      std::free(updated);
    };
    const std::optional<std::string> language = header_field(value.c_str(), "Language");
    if (!language || language->empty()) set("Language", options_.target_language);
    set("Content-Type", "text/plain; charset=UTF-8");
    if (!plurals_.header_value.empty()) set("Plural-Forms", plurals_.header_value);
    set("X-Generator", "rpt");
    po_message_set_msgstr(header, value.c_str());
    // A POT's header is fuzzy until someone fills it; msgfmt ignores a fuzzy header.
    po_message_set_fuzzy(header, 0);
  }

  void fill(po_message_t message, const PendingEntry& entry,
            const std::vector<std::string>& translations) const {
    // A C format string's directives in an order printf reads right (c_format_order.h).
    const bool c_format = po_message_is_format(message, "c-format") != 0;
    auto ordered = [c_format](const char* source, const std::string& translation) {
      return c_format ? c_directives_in_source_order(source, translation) : translation;
    };
    const std::string singular = ordered(po_message_msgid(message), translations[entry.text]);
    if (!entry.plural) {
      po_message_set_msgstr(message, singular.c_str());
    } else {
      const std::string plural =
          ordered(po_message_msgid_plural(message), translations[entry.text + 1]);
      for (int form = 0; form < plurals_.nplurals; ++form) {
        const bool singular_form = plurals_.nplurals > 1 && form == plurals_.form_of_one &&
                                   (plurals_.one_only || entry.singular_fits_plural_forms);
        po_message_set_msgstr_plural(message, form, (singular_form ? singular : plural).c_str());
      }
    }
    po_message_set_fuzzy(message, options_.mark_for_review ? 1 : 0);
    if (!options_.mark_for_review) {  // the previous msgid (#|) only means something when fuzzy
      po_message_set_prev_msgctxt(message, nullptr);
      po_message_set_prev_msgid(message, nullptr);
      po_message_set_prev_msgid_plural(message, nullptr);
    }
  }

  static std::string write(po_file_t file, ErrorLog& log) {
    MemoryFile out("");
    po_file_write(file, out.path().c_str(), &error_handler);
    if (!log.errors.empty()) throw CatalogError("PO: writing: " + log.summary());
    return out.contents();
  }

  std::string source_;
  CatalogOptions options_;
  std::vector<CatalogText> texts_;
  CatalogStats stats_;
  std::vector<PendingEntry> pending_;
  PluralPlan plurals_;
};

}  // namespace

std::unique_ptr<Catalog> parse_po_catalog(std::string_view bytes, const CatalogOptions& options) {
  return std::make_unique<PoCatalog>(bytes, options);
}

}  // namespace rpt::documents
