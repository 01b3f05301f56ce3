#include "formats/open_model_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
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

bool has_gguf_extension(const std::string& path) {
  return std::filesystem::path(path).extension() == ".gguf";
}

}  // namespace

std::shared_ptr<const ModelFile> open_model_file(const std::string& path, const ImportOptions& import) {
  std::error_code ec;
  DACPP_CHECK(std::filesystem::exists(path, ec), ErrorCode::NotFound, "model '", path, "': file not found");
  // A file named .gguf goes to the GGUF reader even when its magic is wrong, so the error says what is wrong
  // with it as a GGUF file rather than as a checkpoint.
  if (has_gguf_magic(path) || has_gguf_extension(path)) return read_gguf(path);
  return import_checkpoint(path, import);
}

}  // namespace dacpp
