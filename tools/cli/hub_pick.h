// Which files of a hub repo make a model dacpp can load, in order of preference:
//   1. model.safetensors + config.json          (DA3 repos, DA2 transformers "-hf" repos)
//   2. the one *.pth                            (DA2 official repos)
//   3. the one *.gguf, or among several the f32 one (depth-anything.cpp GGUF repos)
// `wanted` (pull --file) names the model file explicitly; a model.safetensors also brings its config.json.
#pragma once

#include <string>
#include <vector>

#include "cli/hub_api.h"

namespace dacpp::cli {

enum class ModelKind { Safetensors, Pth, Gguf };

struct ModelPick {
  ModelKind kind = ModelKind::Gguf;
  std::vector<HubFile> files;  // to download; files[0] is the model file itself
};

// Throws NotFound (no usable file; `wanted` absent — listing the repo's model files) or InvalidArgument
// (several candidates: pass --file, listing them).
ModelPick pick_model_files(const HubRepo& repo, const std::string& wanted);

}  // namespace dacpp::cli
