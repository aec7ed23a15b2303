// Move-only owners of libcurl's handles (easy, multi, header list) and of its global state.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace rpt::client {

struct CurlEasyCleanup {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyCleanup>;

// Remove every easy handle from it first (curl_multi_remove_handle).
struct CurlMultiCleanup {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
using CurlMulti = std::unique_ptr<CURLM, CurlMultiCleanup>;

struct CurlListFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlList = std::unique_ptr<curl_slist, CurlListFree>;

// Appends a copy of `line` to `list`.
inline void append(CurlList& list, const std::string& line) {
  curl_slist* appended = curl_slist_append(list.get(), line.c_str());
  if (appended == nullptr) throw std::bad_alloc();  // `list` is left as it was
  static_cast<void>(list.release());                // the same list when it held any line
  list.reset(appended);
}

// curl_global_init for as long as it lives (libcurl counts nested ones).
class CurlGlobal {
 public:
  CurlGlobal() {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("libcurl could not be initialised");
    }
  }
  ~CurlGlobal() { curl_global_cleanup(); }
  CurlGlobal(const CurlGlobal&) = delete;
  CurlGlobal& operator=(const CurlGlobal&) = delete;
};

}  // namespace rpt::client
