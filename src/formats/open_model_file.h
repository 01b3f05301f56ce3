// Opens whatever a user passes as MODEL: a GGUF file (recognised by its magic, memory-mapped in place) or an
// official checkpoint (.pth, .safetensors, a checkpoint folder) converted in memory by import_checkpoint.
// Errors: NotFound for a missing path; the reader's or importer's InvalidModel/Io errors otherwise.
#pragma once

#include <memory>
#include <string>

#include "formats/import.h"
#include "formats/model_file.h"

namespace dacpp {

std::shared_ptr<const ModelFile> open_model_file(const std::string& path, const ImportOptions& import = {});

}  // namespace dacpp
