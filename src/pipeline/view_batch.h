// view_batch: the preprocessed views of one scene → one network input, as the official DA3 InputProcessor does
// (utils/io/input_processor.py::_unify_batch_shapes; spec/models.md §2a.4): when the processed sizes differ,
// every view is centre-cropped to the smallest height and the smallest width (offset (size − min) / 2, exact
// because every processed side is a multiple of 14), then the views are stacked.
#pragma once

#include <vector>

#include "pipeline/preprocess.h"

namespace dacpp::pipeline {

struct ViewBatch {
  Tensor input;  // [S, 3, height, width] f32 host
  int height = 0, width = 0;
};

// views: each [1, 3, h_i, w_i] (from preprocess). Throws InvalidArgument for no views or a malformed input.
ViewBatch batch_views(const std::vector<Preprocessed>& views);

}  // namespace dacpp::pipeline
