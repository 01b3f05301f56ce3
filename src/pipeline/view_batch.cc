#include "pipeline/view_batch.h"

#include <algorithm>
#include <cstring>

namespace dacpp::pipeline {

ViewBatch batch_views(const std::vector<Preprocessed>& views) {
  DACPP_CHECK(!views.empty(), ErrorCode::InvalidArgument, "views: no images");
  ViewBatch b;
  b.height = views[0].height;
  b.width = views[0].width;
  for (const Preprocessed& v : views) {
    DACPP_CHECK(v.input.rank() == 4 && v.input.dim(0) == 1 && v.input.dim(1) == 3 && v.input.dim(2) == v.height &&
                    v.input.dim(3) == v.width && v.height > 0 && v.width > 0,
                ErrorCode::InvalidArgument, "views: preprocessed input has shape ", shape_str(v.input.shape()),
                " for a ", v.height, "x", v.width, " image");
    b.height = std::min(b.height, v.height);
    b.width = std::min(b.width, v.width);
  }
  const int64_t s = static_cast<int64_t>(views.size()), h = b.height, w = b.width;
  b.input = Tensor::empty({s, 3, h, w}, DType::F32, "views");
  float* dst = b.input.data<float>();
  for (int64_t i = 0; i < s; ++i) {
    const Preprocessed& v = views[static_cast<size_t>(i)];
    const int64_t top = (v.height - h) / 2, left = (v.width - w) / 2;
    const float* src = v.input.data<float>();
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t r = 0; r < h; ++r)
        std::memcpy(dst + ((i * 3 + c) * h + r) * w, src + (c * v.height + top + r) * v.width + left,
                    static_cast<size_t>(w) * sizeof(float));
  }
  return b;
}

}  // namespace dacpp::pipeline
