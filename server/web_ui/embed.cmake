# Embeds the page for browsers (server/web_ui.h) in rpt-server. Run at build time by
# server/CMakeLists.txt whenever index.html changes:
#
#   cmake -DINPUT=server/web_ui/index.html -DOUTPUT=build/server/web_ui_page.cc -P embed.cmake
#
# It writes a C++ source with the page's bytes and the SHA-256 (hex) of the contents of its one
# <style> and one <script> element: the Content-Security-Policy header allows exactly those two
# (server/web_ui.cc), so no other inline code, and no code from anywhere else, runs on the page.
if(NOT INPUT OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DINPUT=index.html -DOUTPUT=page.cc -P embed.cmake")
endif()
file(READ "${INPUT}" page)
# A browser's HTML parser turns CR LF into LF before it hashes an element's text: do the same, so
# that a checkout with CR LF line ends still matches its hashes.
string(REPLACE "\r" "" page "${page}")

# The hex SHA-256 of the text of the one <TAG> element (written without attributes).
function(element_sha256 tag out)
  string(FIND "${page}" "<${tag}" first)
  string(FIND "${page}" "<${tag}" last REVERSE)
  string(FIND "${page}" "<${tag}>" open)
  string(FIND "${page}" "</${tag}>" close)
  if(open EQUAL -1 OR NOT first EQUAL open OR NOT last EQUAL open OR close LESS open)
    message(FATAL_ERROR "${INPUT}: the page must hold exactly one <${tag}> element, written "
                        "without attributes (its hash goes into the Content-Security-Policy)")
  endif()
  string(LENGTH "<${tag}>" tag_length)
  math(EXPR begin "${open} + ${tag_length}")
  math(EXPR length "${close} - ${begin}")
  string(SUBSTRING "${page}" ${begin} ${length} text)
  string(SHA256 digest "${text}")
  set(${out} ${digest} PARENT_SCOPE)
endfunction()
element_sha256(style style_sha256)
element_sha256(script script_sha256)

string(LENGTH "${page}" size)
string(HEX "${page}" hex)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)  # 16 bytes a line
string(REGEX REPLACE "(${line})" "\\1\n" bytes "${bytes}")

set(source "// Generated at build time by server/web_ui/embed.cmake from server/web_ui/index.html.
#include <cstddef>

namespace rpt::server::web_ui_data {

extern const unsigned char kPage[];
extern const std::size_t kPageSize;
extern const char kStyleSha256[];
extern const char kScriptSha256[];

const unsigned char kPage[] = {
${bytes}};
const std::size_t kPageSize = ${size};
const char kStyleSha256[] = \"${style_sha256}\";
const char kScriptSha256[] = \"${script_sha256}\";

}  // namespace rpt::server::web_ui_data
")
file(WRITE "${OUTPUT}" "${source}")
