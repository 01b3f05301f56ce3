#include "engine/model.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "formats/gguf_reader.h"
#include "formats/tensor_names.h"
#include "engine/weight_placement.h"

namespace dacpp {
namespace {

bool has_gguf_magic(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

// The ViT blocks of one network are uniform: a tensor present in some block (an optional bias, LayerScale) must be
// present in all of them. The layers accept such tensors when present, so without this check a file missing one
// block's bias would load and silently compute something else.
void check_uniform_blocks(const ModelFile& mf, const models::ModelConfig& cfg) {
  const std::string prefix = "vit.blk.";
  const int depth = static_cast<int>(cfg.vit.depth);
  std::map<std::string, std::vector<bool>> seen;  // suffix -> which blocks have it
  for (const TensorRecord& r : mf.records()) {
    if (r.name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t dot = r.name.find('.', prefix.size());
    if (dot == std::string::npos) continue;
    const std::string idx = r.name.substr(prefix.size(), dot - prefix.size());
    if (idx.empty() || idx.size() > 4 || idx.find_first_not_of("0123456789") != std::string::npos) continue;
    const int b = std::stoi(idx);
    if (b >= depth) continue;
    auto& v = seen[r.name.substr(dot + 1)];
    v.resize(static_cast<size_t>(depth), false);
    v[static_cast<size_t>(b)] = true;
  }
  // qk-norm exists only from vit.qknorm_start on (DA3 any-view); those blocks are checked by the layers themselves.
  const int qk_start = cfg.vit.qknorm_start;
  for (const auto& [suffix, have] : seen)
    for (int b = 0; b < depth; ++b) {
      const bool qk = suffix.rfind("attn_qnorm", 0) == 0 || suffix.rfind("attn_knorm", 0) == 0;
      if (qk && qk_start != -1) continue;
      DACPP_CHECK(have[static_cast<size_t>(b)], ErrorCode::InvalidModel, "model '", mf.path(), "': tensor '", prefix,
                  b, ".", suffix, "' is missing (other ViT blocks have '", suffix, "')");
    }
}

}  // namespace

Model::Model(std::shared_ptr<const ModelFile> file, std::unique_ptr<models::DepthModel> net)
    : file_(std::move(file)), net_(std::move(net)) {}

std::shared_ptr<const Model> Model::load(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  DACPP_CHECK(std::filesystem::exists(path, ec), ErrorCode::NotFound, "model '", path, "': file not found");
  std::shared_ptr<const ModelFile> file =
      has_gguf_magic(path) ? read_gguf(path) : import_checkpoint(path, options.import);
  return from_file(std::move(file), options);
}

std::shared_ptr<const Model> Model::from_file(std::shared_ptr<const ModelFile> file, const LoadOptions& options) {
  DACPP_CHECK(file != nullptr, ErrorCode::Internal, "Model::from_file: null model file");
  // A well-formed GGUF of another family (an LLM, say) is named as such rather than as a missing key.
  const std::string family = file->get_string_or(names::kGeneralArchitecture, names::kArchitecture);
  DACPP_CHECK(family == names::kArchitecture, ErrorCode::InvalidModel, "model '", file->path(), "': metadata key '",
              names::kGeneralArchitecture, "' = '", family, "': not a Depth Anything model (expected '",
              names::kArchitecture, "')");
  const models::ModelConfig cfg = models::ModelConfig::from_file(*file);
  check_uniform_blocks(*file, cfg);
  std::shared_ptr<DevicePlacement> placement;
  if (options.device.kind != DeviceKind::Cpu) {
    placement = std::make_shared<DevicePlacement>(options.device, options.precision);
    file = file->placed(placement);
  }
  std::unique_ptr<models::DepthModel> net = models::create_model(*file, cfg);
  std::shared_ptr<Model> m(new Model(std::move(file), std::move(net)));
  if (placement) {
    m->device_ = options.device;
    m->act_dtype_ = options.precision;
    m->device_weight_bytes_ = placement->bytes();
  }
  return m;
}

}  // namespace dacpp
