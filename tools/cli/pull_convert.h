// The conversion step of `dacpp pull`: an official checkpoint (a .pth file, or a folder holding
// model.safetensors + config.json) → a GGUF file, through the importer in src/formats/import.h.
#pragma once

#include <string>

namespace dacpp::cli {

// Writes `dst` (atomically; parent folders must exist). max_depth > 0 overrides the metric depth range of a DA2
// metric checkpoint; 0 keeps the importer's rule. `name` becomes the checkpoint name (empty: the importer's
// default, the file stem). Throws the importer's errors (InvalidModel / NotFound naming the file, Io writing).
void convert_checkpoint(const std::string& src, const std::string& dst, double max_depth, const std::string& name);

}  // namespace dacpp::cli
