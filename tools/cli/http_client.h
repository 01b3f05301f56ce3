// Plain HTTP(S) GETs over libcurl for `dacpp pull`: a small text body, or a file download that resumes.
// Redirects are followed (the hub answers file requests with 302 to a CDN); a custom Authorization header is not
// forwarded to another host (libcurl's rule). Timeouts are bounded: connect 20 s; a transfer that moves no byte
// for 60 s is aborted.
//
// Errors: a transport failure (no route, refused, DNS, TLS, timeout, truncated body) throws Error{Io} naming the
// URL and curl's own error text, plus a hint on how to pass a local model file instead. HTTP error statuses are
// NOT errors here: the status is returned and the caller maps it (it knows the repo and file).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace dacpp::cli {

// Process-wide libcurl setup for the lifetime of one command (curl_global_init / curl_global_cleanup).
class CurlSession {
 public:
  CurlSession();
  ~CurlSession();
  CurlSession(const CurlSession&) = delete;
  CurlSession& operator=(const CurlSession&) = delete;
};

struct HttpRequest {
  std::string url;
  std::string bearer_token;  // sent as "Authorization: Bearer <token>" when non-empty
};

// Called with (bytes of the file so far, total file bytes or -1 when unknown).
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

// GET into `body` (at most max_bytes, else Error{Io}). Returns the final HTTP status.
int http_get_text(const HttpRequest& req, std::string& body, size_t max_bytes);

// GET into `part_path`. If the file exists and is non-empty, asks for the rest with "Range: bytes=<size>-":
// a 206 whose Content-Range starts at that size is appended, a 200 restarts the file from byte 0. The body of a
// response other than 200/206 is discarded (the file is left as it was). Returns the final HTTP status.
// A write failure throws Error{Io} naming part_path. A transfer cut short keeps what arrived, for resuming.
int http_download(const HttpRequest& req, const std::string& part_path, const ProgressFn& progress);

}  // namespace dacpp::cli
