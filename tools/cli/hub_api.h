// The Hugging Face hub, as `dacpp pull` uses it: list a model repo's files at a revision, and download one file
// into the cache with resume and SHA-256 verification.
//
//   GET {endpoint}/api/models/{owner}/{name}/revision/{rev}?blobs=true  → {"siblings":[{"rfilename", "size",
//                                                                         "lfs":{"sha256","size"}}...]}
//   GET {endpoint}/{owner}/{name}/resolve/{rev}/{file}                  → 302 to the storage, then the bytes
//
// Errors (dacpp::Error), each naming the repo and, where relevant, the file and URL:
//   Io        401/403 "access denied for <repo> (set HF_TOKEN ...)"; other HTTP errors; network failures (with
//             how to pass a local model instead); SHA-256 or size mismatch (the .part file is deleted)
//   NotFound  404 for the repo/revision or the file
//   InvalidArgument  a malformed repo id
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dacpp::cli {

struct HubConfig {
  std::string endpoint = "https://huggingface.co";  // no trailing slash
  std::string token;                                // HF_TOKEN; empty = anonymous
};

// HF_ENDPOINT and HF_TOKEN from the environment, with the defaults above.
HubConfig hub_config_from_env();

struct HubFile {
  std::string name;    // path inside the repo, '/'-separated, validated (no "..", not absolute)
  int64_t size = -1;   // bytes, -1 when the hub did not say
  std::string sha256;  // lower-case hex for LFS files, empty otherwise
};

struct HubRepo {
  std::string id;        // "owner/name"
  std::string revision;  // as asked ("main", a tag or a commit)
  std::vector<HubFile> files;
};

// Throws InvalidArgument unless `repo` is "owner/name" of [A-Za-z0-9._-] (no "..", no leading '.' or '-').
void check_repo_id(const std::string& repo);

// The repo's files at `revision` (one API call).
HubRepo hub_list_files(const HubConfig& cfg, const std::string& repo, const std::string& revision);

// Downloads `file` to `dest` (parent folders created) through "<dest>.part", resuming a .part left by an earlier
// run. Verifies the size and SHA-256 when the hub gave them, then renames. A `dest` already present with the
// expected size is kept as is. Progress goes to stderr.
void hub_download(const HubConfig& cfg, const HubRepo& repo, const HubFile& file, const std::string& dest);

}  // namespace dacpp::cli
