// The GGUF reader: maps a GGUF v3 (or v2) little-endian file and validates every count, length, type, offset and
// extent against the file size before using it. Tensor bytes stay in the mapping (zero-copy); the returned
// ModelFile keeps the mapping alive. Shapes are returned in torch order (ggml `ne` reversed).
//
// Errors name the file and the field:
//   NotFound         "model 'x.gguf': file not found"
//   InvalidArgument  "model 'dir': is a directory, not a file"
//   Io               open/stat/mmap failures (fault sites "file.read", "file.mmap")
//   InvalidModel     "model 'x.gguf': <field>: <problem>", e.g.
//                    "model 'x.gguf': header.tensor_count: 1099511627776 tensors cannot fit in 96 bytes"
//                    "model 'x.gguf': tensor 'vit.norm.weight' type: unsupported tensor type 2"
#pragma once

#include <memory>
#include <string>

#include "formats/model_file.h"

namespace dacpp {

std::shared_ptr<const ModelFile> read_gguf(const std::string& path);

}  // namespace dacpp
