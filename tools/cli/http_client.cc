#include "cli/http_client.h"

#include <curl/curl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include <strings.h>

#include "core/error.h"

namespace dacpp::cli {
namespace {

constexpr long kConnectTimeoutS = 20;
constexpr long kStallTimeoutS = 60;  // abort when below 1 byte/s for this long

using CurlHandle = std::unique_ptr<CURL, void (*)(CURL*)>;
using HeaderList = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

// Shared easy-handle setup; `errbuf` must outlive the transfer.
CurlHandle make_handle(const HttpRequest& req, HeaderList& headers, char* errbuf) {
  CurlHandle h(curl_easy_init(), &curl_easy_cleanup);
  DACPP_CHECK(h, ErrorCode::Io, "HTTP: curl_easy_init failed for ", req.url);
  if (!req.bearer_token.empty()) {
    const std::string auth = "Authorization: Bearer " + req.bearer_token;
    headers.reset(curl_slist_append(headers.release(), auth.c_str()));
  }
  CURL* c = h.get();
  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutS);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, kStallTimeoutS);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "dacpp/0.1.0");
  return h;
}

[[noreturn]] void throw_transport(const std::string& url, CURLcode rc, const char* errbuf,
                                const char* note) {
  const std::string text = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  DACPP_THROW(ErrorCode::Io, "cannot download ", url, ": ", text, " (curl error ", static_cast<int>(rc), ")", note,
              ". Without network access, fetch the model file elsewhere and pass it directly: "
              "dacpp depth -m /path/model.gguf IMAGE");
}

long response_code(CURL* c) {
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

struct TextSink {
  std::string* body;
  size_t max_bytes;
  bool overflow = false;
};

size_t on_text(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<TextSink*>(user);
  if (s->body->size() + size * n > s->max_bytes) {
    s->overflow = true;
    return 0;
  }
  s->body->append(data, size * n);
  return size * n;
}

// State of one file download. The file is opened at the first body byte of a 200/206 response.
struct FileSink {
  CURL* curl = nullptr;
  std::string path;
  int64_t offset = 0;            // bytes already in the file when the request was made
  std::string content_range;     // of the latest response
  std::unique_ptr<FILE, int (*)(FILE*)> file{nullptr, &std::fclose};
  std::string error;             // set when the callback aborted the transfer
  const ProgressFn* progress = nullptr;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<FileSink*>(user);
  const std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) s->content_range.clear();
  if (line.size() > 14 && strncasecmp(line.c_str(), "content-range:", 14) == 0) s->content_range = line.substr(14);
  return size * n;
}

// Opens the file for a 200 (truncate) or 206 (append, after checking where the range starts).
bool open_sink(FileSink* s, long code) {
  if (code == 206) {
    long long start = -1;
    if (std::sscanf(s->content_range.c_str(), " bytes %lld-", &start) != 1 || start != s->offset) {
      s->error = str_cat("server sent a partial response starting at byte ", start, " of ", s->path,
                         ", expected byte ", s->offset);
      return false;
    }
    s->file.reset(std::fopen(s->path.c_str(), "ab"));
  } else {
    s->offset = 0;
    s->file.reset(std::fopen(s->path.c_str(), "wb"));
  }
  if (!s->file) s->error = str_cat("cannot open '", s->path, "' for writing: ", std::strerror(errno));
  return static_cast<bool>(s->file);
}

size_t on_file(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<FileSink*>(user);
  const long code = response_code(s->curl);
  if (code != 200 && code != 206) return size * n;  // a redirect or error body: not file content
  if (!s->file && !open_sink(s, code)) return 0;
  if (std::fwrite(data, 1, size * n, s->file.get()) != size * n) {
    s->error = str_cat("cannot write '", s->path, "': ", std::strerror(errno));
    return 0;
  }
  return size * n;
}

int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* s = static_cast<FileSink*>(user);
  if (!s->file || !s->progress || !*s->progress) return 0;
  (*s->progress)(s->offset + dlnow, dltotal > 0 ? s->offset + dltotal : -1);
  return 0;
}

int64_t existing_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

}  // namespace

CurlSession::CurlSession() {
  DACPP_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK, ErrorCode::Io, "HTTP: curl_global_init failed");
}
CurlSession::~CurlSession() { curl_global_cleanup(); }

int http_get_text(const HttpRequest& req, std::string& body, size_t max_bytes) {
  char errbuf[CURL_ERROR_SIZE] = {0};
  HeaderList headers(nullptr, &curl_slist_free_all);
  CurlHandle h = make_handle(req, headers, errbuf);
  TextSink sink{&body, max_bytes};
  body.clear();
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &on_text);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
  const CURLcode rc = curl_easy_perform(h.get());
  DACPP_CHECK(!sink.overflow, ErrorCode::Io, "HTTP: response from ", req.url, " exceeds ", max_bytes, " bytes");
  if (rc != CURLE_OK) throw_transport(req.url, rc, errbuf, "");
  return static_cast<int>(response_code(h.get()));
}

int http_download(const HttpRequest& req, const std::string& part_path, const ProgressFn& progress) {
  char errbuf[CURL_ERROR_SIZE] = {0};
  HeaderList headers(nullptr, &curl_slist_free_all);
  CurlHandle h = make_handle(req, headers, errbuf);
  FileSink sink;
  sink.curl = h.get();
  sink.path = part_path;
  sink.offset = existing_size(part_path);
  sink.progress = &progress;
  CURL* c = h.get();
  const std::string range = str_cat(sink.offset, "-");
  if (sink.offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_file);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &sink);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &sink);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  const CURLcode rc = curl_easy_perform(c);
  FILE* f = sink.file.release();
  const bool close_failed = f && std::fclose(f) != 0;
  DACPP_CHECK(sink.error.empty(), ErrorCode::Io, "download of ", req.url, ": ", sink.error);
  DACPP_CHECK(!close_failed, ErrorCode::Io, "cannot write '", part_path, "': ", std::strerror(errno));
  if (rc != CURLE_OK)
    throw_transport(req.url, rc, errbuf, "; what arrived is kept and the same command resumes it");
  const long code = response_code(c);
  if (code == 200 && !f) {  // an empty file: no body byte ever opened it
    std::unique_ptr<FILE, int (*)(FILE*)> empty(std::fopen(part_path.c_str(), "wb"), &std::fclose);
    DACPP_CHECK(empty, ErrorCode::Io, "cannot create '", part_path, "': ", std::strerror(errno));
  }
  return static_cast<int>(code);
}

}  // namespace dacpp::cli
