#include "cli/hub_pick.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace dacpp::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const HubFile* find_file(const HubRepo& repo, const std::string& name) {
  for (const HubFile& f : repo.files)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<const HubFile*> with_suffix(const HubRepo& repo, const std::string& suffix) {
  std::vector<const HubFile*> out;
  for (const HubFile& f : repo.files)
    if (ends_with(lower(f.name), suffix)) out.push_back(&f);
  return out;
}

std::string join_names(const std::vector<const HubFile*>& files) {
  std::string s;
  for (const HubFile* f : files) s += (s.empty() ? "" : ", ") + f->name;
  return s.empty() ? "(none)" : s;
}

// Model files of any supported kind, for error messages.
std::vector<const HubFile*> model_candidates(const HubRepo& repo) {
  std::vector<const HubFile*> out;
  for (const char* suffix : {".safetensors", ".pth", ".gguf"})
    for (const HubFile* f : with_suffix(repo, suffix)) out.push_back(f);
  return out;
}

ModelPick pick_named(const HubRepo& repo, const std::string& wanted) {
  const HubFile* f = find_file(repo, wanted);
  DACPP_CHECK(f, ErrorCode::NotFound, "pull: ", repo.id, " at revision '", repo.revision, "' has no file '",
              wanted, "'; its model files: ", join_names(model_candidates(repo)));
  const std::string name = lower(wanted);
  if (ends_with(name, ".gguf")) return {ModelKind::Gguf, {*f}};
  if (ends_with(name, ".pth")) return {ModelKind::Pth, {*f}};
  DACPP_CHECK(ends_with(name, ".safetensors"), ErrorCode::InvalidArgument, "pull: --file '", wanted,
              "' is not a model file dacpp can use (.safetensors, .pth or .gguf)");
  const HubFile* config = find_file(repo, "config.json");
  DACPP_CHECK(config, ErrorCode::NotFound, "pull: ", repo.id, " has '", wanted,
              "' but no config.json beside it, which the importer needs");
  return {ModelKind::Safetensors, {*f, *config}};
}

const HubFile* pick_gguf(const HubRepo& repo, const std::vector<const HubFile*>& ggufs) {
  if (ggufs.size() == 1) return ggufs[0];
  std::vector<const HubFile*> f32;
  for (const HubFile* f : ggufs)
    if (lower(f->name).find("f32") != std::string::npos) f32.push_back(f);
  DACPP_CHECK(f32.size() == 1, ErrorCode::InvalidArgument, "pull: ", repo.id, " has ", ggufs.size(),
              " GGUF files; choose one with --file: ", join_names(ggufs));
  return f32[0];
}

}  // namespace

ModelPick pick_model_files(const HubRepo& repo, const std::string& wanted) {
  if (!wanted.empty()) return pick_named(repo, wanted);
  const HubFile* st = find_file(repo, "model.safetensors");
  const HubFile* config = find_file(repo, "config.json");
  if (st && config) return {ModelKind::Safetensors, {*st, *config}};
  const std::vector<const HubFile*> pths = with_suffix(repo, ".pth");
  DACPP_CHECK(pths.size() <= 1, ErrorCode::InvalidArgument, "pull: ", repo.id, " has ", pths.size(),
              " .pth checkpoints; choose one with --file: ", join_names(pths));
  if (pths.size() == 1) return {ModelKind::Pth, {*pths[0]}};
  const std::vector<const HubFile*> ggufs = with_suffix(repo, ".gguf");
  if (!ggufs.empty()) return {ModelKind::Gguf, {*pick_gguf(repo, ggufs)}};
  DACPP_THROW(ErrorCode::NotFound, "pull: ", repo.id, " at revision '", repo.revision,
              "' has no model dacpp can use (model.safetensors + config.json, one .pth or a .gguf); its model "
              "files: ", join_names(model_candidates(repo)), "; pass one with --file");
}

}  // namespace dacpp::cli
