#include "engine/model.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "formats/gguf_reader.h"

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

}  // namespace

Model::Model(std::shared_ptr<const ModelFile> file, std::unique_ptr<models::DepthModel> net)
    : file_(std::move(file)), net_(std::move(net)) {}

std::shared_ptr<const Model> Model::load(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  DACPP_CHECK(std::filesystem::exists(path, ec), ErrorCode::NotFound, "model '", path, "': file not found");
  std::shared_ptr<const ModelFile> file =
      has_gguf_magic(path) ? read_gguf(path) : import_checkpoint(path, options.import);
  return from_file(std::move(file));
}

std::shared_ptr<const Model> Model::from_file(std::shared_ptr<const ModelFile> file) {
  DACPP_CHECK(file != nullptr, ErrorCode::Internal, "Model::from_file: null model file");
  const models::ModelConfig cfg = models::ModelConfig::from_file(*file);
  std::unique_ptr<models::DepthModel> net = models::create_model(*file, cfg);
  return std::shared_ptr<const Model>(new Model(std::move(file), std::move(net)));
}

}  // namespace dacpp
