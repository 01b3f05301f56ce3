// Reader for the safetensors format (huggingface/safetensors): an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}, then the data
// region. The file is mmapped; f32/f16/bf16/i32 tensors point into the mapping (copied only when misaligned),
// i64 and f64 tensors are converted into owned i32 / f32 buffers (i64 values must fit in i32).
//
// Every defect is Error{InvalidModel} naming the file and the field:
//   "safetensors 'm.safetensors': tensor 'a.weight' data_offsets [0,100] end 100 is past the data region (96 bytes)"
#pragma once

#include <string>

#include "formats/checkpoint_tensors.h"

namespace dacpp {

// Limit on the JSON header size (the format's own reference reader uses the same 100 MB bound).
inline constexpr size_t kSafetensorsMaxHeaderBytes = 100u * 1000u * 1000u;

CheckpointTensors read_safetensors(const std::string& path);

}  // namespace dacpp
