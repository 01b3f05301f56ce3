// dacpp pull REPO — download a Hugging Face model repo's checkpoint into the cache and convert it to GGUF.
//
// Cache ($DACPP_CACHE, else ~/.cache/dacpp, or --cache):
//   <cache>/hub/<owner>--<name>/<revision>/<file>      downloads, exactly as named in the repo
//   <cache>/models/<owner>--<name>.gguf                 the converted model (…--<revision>.gguf off "main")
// stdout gets one line: the path to pass as MODEL (the GGUF, or with --no-convert the downloaded checkpoint).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "cli/cache_dir.h"
#include "cli/commands.h"
#include "cli/http_client.h"
#include "cli/hub_api.h"
#include "cli/hub_pick.h"
#include "cli/pull_convert.h"
#include "core/error.h"

namespace dacpp::cli {
namespace fs = std::filesystem;
namespace {

struct PullOptions {
  std::string repo;
  std::string revision = "main";
  std::string cache;
  std::string file;
  bool no_convert = false;
  double max_depth = 0;  // 0 = not given
};

struct CachePaths {
  fs::path revision_dir;  // downloads
  fs::path gguf;          // conversion output
};

fs::path cache_root(const std::string& flag) {
  if (!flag.empty()) return flag;
  const std::string dir = cache_dir();
  DACPP_CHECK(!dir.empty(), ErrorCode::InvalidArgument,
              "pull: no cache folder: HOME is not set; set DACPP_CACHE or pass --cache DIR");
  return dir;
}

// Revisions become folder names: '/' (as in refs/pr/1) turns into "--"; anything else unusual is refused.
std::string revision_slug(const std::string& rev) {
  DACPP_CHECK(!rev.empty() && rev.size() <= 256 && rev.front() != '.' && rev.find("..") == std::string::npos &&
                  rev.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/") ==
                      std::string::npos,
              ErrorCode::InvalidArgument, "pull: --revision '", rev,
              "' is not a branch, tag or commit name dacpp accepts ([A-Za-z0-9._/-], no '..')");
  std::string slug;
  for (char c : rev) slug += (c == '/') ? std::string("--") : std::string(1, c);
  return slug;
}

CachePaths cache_paths(const PullOptions& opt) {
  const fs::path root = cache_root(opt.cache);
  std::string slug = opt.repo;
  slug.replace(slug.find('/'), 1, "--");
  const std::string rev = revision_slug(opt.revision);
  const std::string gguf_name = opt.revision == "main" ? slug + ".gguf" : slug + "--" + rev + ".gguf";
  return {root / "hub" / slug / rev, root / "models" / gguf_name};
}

// True when `out` exists and is newer than every downloaded file under `sources` (and there is at least one).
bool up_to_date(const fs::path& out, const fs::path& sources) {
  std::error_code ec;
  if (!fs::is_regular_file(out, ec) || !fs::is_directory(sources, ec)) return false;
  const fs::file_time_type out_time = fs::last_write_time(out, ec);
  if (ec) return false;
  int count = 0;
  for (auto it = fs::recursive_directory_iterator(sources, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() == ".part") continue;
    if (it->last_write_time(ec) > out_time || ec) return false;
    ++count;
  }
  return !ec && count > 0;
}

void print_result(const fs::path& p) { std::printf("%s\n", p.string().c_str()); }

int run_pull(const PullOptions& opt) {
  check_repo_id(opt.repo);
  const CachePaths paths = cache_paths(opt);
  const bool forced_convert = opt.max_depth > 0;
  if (!opt.no_convert && !forced_convert && up_to_date(paths.gguf, paths.revision_dir)) {
    print_result(paths.gguf);
    return 0;
  }
  if (!opt.file.empty() && opt.file.front() != '/' && opt.file.find("..") == std::string::npos &&
      fs::path(opt.file).extension() == ".gguf" &&
      fs::is_regular_file(paths.revision_dir / opt.file)) {
    print_result(paths.revision_dir / opt.file);
    return 0;
  }
  CurlSession curl;
  const HubConfig cfg = hub_config_from_env();
  const HubRepo listing = hub_list_files(cfg, opt.repo, opt.revision);
  const ModelPick pick = pick_model_files(listing, opt.file);
  for (const HubFile& f : pick.files) {
    std::fprintf(stderr, "dacpp: pull: %s@%s: %s\n", opt.repo.c_str(), opt.revision.c_str(), f.name.c_str());
    hub_download(cfg, listing, f, (paths.revision_dir / f.name).string());
  }
  const fs::path model = paths.revision_dir / pick.files[0].name;
  if (pick.kind == ModelKind::Gguf || opt.no_convert) {
    print_result(pick.kind == ModelKind::Safetensors ? model.parent_path() : model);
    return 0;
  }
  if (!forced_convert && up_to_date(paths.gguf, paths.revision_dir)) {
    print_result(paths.gguf);
    return 0;
  }
  std::error_code ec;
  fs::create_directories(paths.gguf.parent_path(), ec);
  DACPP_CHECK(!ec, ErrorCode::Io, "pull: cannot create folder '", paths.gguf.parent_path().string(),
              "': ", ec.message());
  const fs::path source = pick.kind == ModelKind::Safetensors ? model.parent_path() : model;
  std::fprintf(stderr, "dacpp: pull: converting %s to %s\n", source.string().c_str(), paths.gguf.string().c_str());
  // A folder's own name is the revision; the repo name says more. A .pth keeps its file stem.
  const std::string name = pick.kind == ModelKind::Safetensors ? opt.repo.substr(opt.repo.find('/') + 1) : "";
  convert_checkpoint(source.string(), paths.gguf.string(), opt.max_depth, name);
  print_result(paths.gguf);
  return 0;
}

}  // namespace

Command register_pull(CLI::App& app) {
  auto opt = std::make_shared<PullOptions>();
  CLI::App* sub = app.add_subcommand("pull", "Download a Hugging Face model repo and convert it to GGUF");
  sub->add_option("repo", opt->repo, "Model repo id, OWNER/NAME (e.g. depth-anything/DA3-SMALL)")->required();
  sub->add_option("--revision", opt->revision, "Branch, tag or commit (default main)");
  sub->add_option("--cache", opt->cache, "Cache folder (default $DACPP_CACHE, else ~/.cache/dacpp)");
  sub->add_option("--file", opt->file, "Model file in the repo to fetch (when it holds several)");
  sub->add_flag("--no-convert", opt->no_convert, "Only download; print the checkpoint's path");
  sub->add_option("--max-depth", opt->max_depth, "Metric depth range (m) to record when converting")
      ->check(CLI::PositiveNumber);
  return {sub, [opt]() { return run_pull(*opt); }};
}

}  // namespace dacpp::cli
