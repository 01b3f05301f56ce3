// CheckpointTensors: what a checkpoint reader (safetensors, PyTorch zip) hands to the importer: the tensors under
// their source names (state-dict keys), with torch-order shapes and host pointers that stay valid while
// `keepalive` lives (the file mapping, plus any buffers a reader had to allocate).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/model_file.h"

namespace dacpp {

struct CheckpointTensors {
  std::string path;
  std::vector<TensorRecord> tensors;  // source order; dtype F32, F16, BF16 or I32
  std::map<std::string, std::string> metadata;  // safetensors "__metadata__" (string → string); empty for .pth
  std::shared_ptr<void> keepalive;
  size_t file_bytes = 0;
};

}  // namespace dacpp
