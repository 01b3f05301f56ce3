// Reader for PyTorch checkpoints written by torch.save (the zip format, the default since torch 1.6), without
// Python: ZipArchive indexes the stored entries, PickleReader decodes `<archive>/data.pkl`, and each tensor's
// bytes come from `<archive>/data/<key>`. The file is mmapped; contiguous f32/f16/bf16/i32 tensors point into the
// mapping, non-contiguous ones are copied to contiguous, i64/f64 are converted to i32/f32.
//
// The pickled root must be a dict (state dict). Nested dicts are flattened with "." ("model.x.weight"); non-tensor
// leaves (ints, strings, None) are skipped. Every defect is Error{InvalidModel} naming the file and the defect.
#pragma once

#include <string>

#include "formats/checkpoint_tensors.h"

namespace dacpp {

CheckpointTensors read_pth(const std::string& path);

}  // namespace dacpp
