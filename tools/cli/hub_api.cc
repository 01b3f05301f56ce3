#include "cli/hub_api.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "cli/download_progress.h"
#include "cli/http_client.h"
#include "cli/sha256.h"
#include "core/error.h"
#include "core/log.h"

namespace dacpp::cli {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxListingBytes = size_t(64) << 20;

// Percent-encodes everything but RFC 3986 unreserved characters (and '/' when keep_slash).
std::string url_encode(const std::string& s, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// A repo path is safe to join under the cache: relative, no "." or ".." or empty segments, no backslash.
bool safe_repo_path(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos) return false;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('/', start), name.size());
    const std::string seg = name.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

// Maps a non-success HTTP status to the error the user should see. `file` is empty for the listing call.
void check_status(int code, const HubConfig& cfg, const std::string& repo, const std::string& revision,
                  const std::string& file, const std::string& url) {
  if (code == 200 || code == 206) return;
  if (code == 401 || code == 403) {
    DACPP_THROW(ErrorCode::Io, "access denied for ", repo, " (HTTP ", code, " from ", url, "): ",
                cfg.token.empty() ? "set HF_TOKEN to a token that can read it (private or gated repos, and "
                                    "repos that do not exist, answer this way)"
                                  : "the HF_TOKEN given was refused; check that it can read this repo");
  }
  if (code == 404) {
    if (file.empty())
      DACPP_THROW(ErrorCode::NotFound, "model repo '", repo, "' at revision '", revision, "' not found on ",
                  cfg.endpoint, " (HTTP 404 from ", url, ")");
    DACPP_THROW(ErrorCode::NotFound, "file '", file, "' not found in ", repo, " at revision '", revision,
                "' (HTTP 404 from ", url, ")");
  }
  DACPP_THROW(ErrorCode::Io, "HTTP ", code, " from ", url, " (", file.empty() ? "listing " + repo : file, ")");
}

HubFile parse_sibling(const nlohmann::json& s, const std::string& url) {
  HubFile f;
  DACPP_CHECK(s.is_object() && s.contains("rfilename") && s["rfilename"].is_string(), ErrorCode::Io,
              "unexpected answer from ", url, ": a 'siblings' entry has no 'rfilename' string");
  f.name = s["rfilename"].get<std::string>();
  if (s.contains("size") && s["size"].is_number_integer()) f.size = s["size"].get<int64_t>();
  const auto lfs = s.find("lfs");
  if (lfs != s.end() && lfs->is_object()) {
    if (lfs->contains("size") && (*lfs)["size"].is_number_integer()) f.size = (*lfs)["size"].get<int64_t>();
    if (lfs->contains("sha256") && (*lfs)["sha256"].is_string()) f.sha256 = (*lfs)["sha256"].get<std::string>();
  }
  for (char& c : f.sha256) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  DACPP_CHECK(f.sha256.empty() || (f.sha256.size() == 64 &&
                                   f.sha256.find_first_not_of("0123456789abcdef") == std::string::npos),
              ErrorCode::Io, "unexpected answer from ", url, ": file '", f.name, "' has a malformed sha256 '",
              f.sha256, "'");
  return f;
}

int64_t size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

}  // namespace

HubConfig hub_config_from_env() {
  HubConfig cfg;
  if (const char* e = std::getenv("HF_ENDPOINT"); e && *e) cfg.endpoint = e;
  while (!cfg.endpoint.empty() && cfg.endpoint.back() == '/') cfg.endpoint.pop_back();
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) cfg.token = t;
  return cfg;
}

void check_repo_id(const std::string& repo) {
  const size_t slash = repo.find('/');
  const auto ok_part = [](const std::string& p) {
    if (p.empty() || p.size() > 96 || p.front() == '.' || p.front() == '-' || p.find("..") != std::string::npos)
      return false;
    for (unsigned char c : p)
      if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
    return true;
  };
  DACPP_CHECK(slash != std::string::npos && ok_part(repo.substr(0, slash)) && ok_part(repo.substr(slash + 1)),
              ErrorCode::InvalidArgument, "pull: '", repo,
              "' is not a Hugging Face model repo id; expected OWNER/NAME, e.g. depth-anything/DA3-SMALL");
}

HubRepo hub_list_files(const HubConfig& cfg, const std::string& repo, const std::string& revision) {
  check_repo_id(repo);
  const std::string url = str_cat(cfg.endpoint, "/api/models/", repo, "/revision/",
                                  url_encode(revision, /*keep_slash=*/false), "?blobs=true");
  std::string body;
  check_status(http_get_text({url, cfg.token}, body, kMaxListingBytes), cfg, repo, revision, "", url);
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  DACPP_CHECK(j.is_object() && j.contains("siblings") && j["siblings"].is_array(), ErrorCode::Io,
              "unexpected answer from ", url, ": expected a JSON object with a 'siblings' list");
  HubRepo out{repo, revision, {}};
  for (const nlohmann::json& s : j["siblings"]) {
    HubFile f = parse_sibling(s, url);
    if (safe_repo_path(f.name)) out.files.push_back(std::move(f));
    else log::warn("pull: ignoring file '", f.name, "' of ", repo, ": not a safe relative path");
  }
  return out;
}

void hub_download(const HubConfig& cfg, const HubRepo& repo, const HubFile& file, const std::string& dest) {
  if (fs::is_regular_file(dest) && (file.size < 0 || size_or_zero(dest) == file.size)) return;
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  DACPP_CHECK(!ec, ErrorCode::Io, "pull: cannot create folder '", fs::path(dest).parent_path().string(),
              "': ", ec.message());
  const std::string part = dest + ".part";
  if (file.size >= 0 && size_or_zero(part) > file.size) remove_quietly(part);
  const std::string url = str_cat(cfg.endpoint, "/", repo.id, "/resolve/",
                                  url_encode(repo.revision, /*keep_slash=*/false), "/",
                                  url_encode(file.name, /*keep_slash=*/true));
  if (file.size < 0 || size_or_zero(part) < file.size) {
    const int64_t resumed = size_or_zero(part);
    if (resumed > 0) std::fprintf(stderr, "dacpp: pull: resuming %s at %s\n", file.name.c_str(),
                                  human_bytes(static_cast<double>(resumed)).c_str());
    DownloadProgress progress(file.name, resumed);
    const ProgressFn on_progress = [&](int64_t done, int64_t total) { progress.update(done, total); };
    int code = http_download({url, cfg.token}, part, on_progress);
    if (code == 416 && resumed > 0) {  // the .part does not fit the file any more: start over
      remove_quietly(part);
      code = http_download({url, cfg.token}, part, on_progress);
    }
    check_status(code, cfg, repo.id, repo.revision, file.name, url);
    progress.finish(size_or_zero(part));
  }
  const int64_t got = size_or_zero(part);
  DACPP_CHECK(file.size < 0 || got == file.size, ErrorCode::Io, "pull: download of ", file.name, " from ",
              repo.id, " is incomplete: ", got, " of ", file.size, " bytes; run the same command again to resume");
  if (!file.sha256.empty()) {
    const std::string sha = sha256_file(part);
    if (sha != file.sha256) {
      remove_quietly(part);
      DACPP_THROW(ErrorCode::Io, "pull: SHA-256 mismatch for ", file.name, " of ", repo.id, ": expected ",
                  file.sha256, ", got ", sha, " (from ", url, "); the damaged download was deleted");
    }
  }
  fs::rename(part, dest, ec);
  DACPP_CHECK(!ec, ErrorCode::Io, "pull: cannot rename '", part, "' to '", dest, "': ", ec.message());
}

}  // namespace dacpp::cli
