#include "engine/limits.h"

#include <limits>
#include <string>

#include "core/error.h"
#include "engine/runner.h"
#include "pipeline/preprocess.h"

namespace dacpp {

void validate_limits(const Limits& l) {
  DACPP_CHECK(l.max_pixels > 0, ErrorCode::InvalidArgument, "limits: max_pixels ", l.max_pixels, " must be > 0");
  DACPP_CHECK(l.max_image_bytes > 0, ErrorCode::InvalidArgument, "limits: max_image_bytes ", l.max_image_bytes,
              " must be > 0");
  DACPP_CHECK(l.max_process_size >= 14, ErrorCode::InvalidArgument, "limits: max_process_size ", l.max_process_size,
              " must be >= 14");
  DACPP_CHECK(l.max_process_pixels >= 14 * 14, ErrorCode::InvalidArgument, "limits: max_process_pixels ",
              l.max_process_pixels, " must be >= 196");
  DACPP_CHECK(l.max_views > 0, ErrorCode::InvalidArgument, "limits: max_views ", l.max_views, " must be > 0");
  DACPP_CHECK(l.max_request_bytes > 0, ErrorCode::InvalidArgument, "limits: max_request_bytes ",
              l.max_request_bytes, " must be > 0");
}

io::ImageLimits image_limits(const Limits& limits, bool apply_exif_orientation) {
  io::ImageLimits il;
  il.max_pixels = limits.max_pixels;
  il.max_file_bytes = limits.max_image_bytes;
  il.apply_exif_orientation = apply_exif_orientation;
  return il;
}

void check_pixel_limit(const Limits& limits, int64_t width, int64_t height, const char* what) {
  DACPP_CHECK(width > 0 && height > 0, ErrorCode::InvalidArgument, what, ": size ", width, "x", height,
              " must be positive");
  // width ≤ max / height, not width · height ≤ max: the product of two huge sides overflows int64.
  if (width > limits.max_pixels / height) {
    const std::string count =
        width <= std::numeric_limits<int64_t>::max() / height ? str_cat(" = ", width * height, " pixels") : "";
    DACPP_THROW(ErrorCode::InvalidArgument, what, " is ", width, "x", height, count, ", over the limit of ",
                limits.max_pixels, " pixels (max_pixels)");
  }
}

void check_run_limits(const Limits& limits, const io::Image& image, const RunOptions& options,
                      const pipeline::PreprocessOptions& preprocess) {
  check_pixel_limit(limits, image.width(), image.height(), "run: image");
  DACPP_CHECK(options.size <= limits.max_process_size, ErrorCode::InvalidArgument, "run: size ", options.size,
              " is over the limit of ", limits.max_process_size, " (max_process_size)");
  const pipeline::ResizePlan plan = pipeline::plan_resize(image.height(), image.width(), preprocess);
  const int64_t processed = static_cast<int64_t>(plan.height) * plan.width;
  DACPP_CHECK(processed <= limits.max_process_pixels, ErrorCode::InvalidArgument, "run: image ", image.width(), "x",
              image.height(), " would be processed at ", plan.width, "x", plan.height, " = ", processed,
              " pixels, over the limit of ", limits.max_process_pixels, " pixels (max_process_pixels)");
}

void check_view_count(const Limits& limits, size_t views) {
  DACPP_CHECK(views > 0, ErrorCode::InvalidArgument, "run: a multi-view request needs at least one image");
  DACPP_CHECK(views <= static_cast<size_t>(limits.max_views), ErrorCode::InvalidArgument, "run: ", views,
              " views, over the limit of ", limits.max_views, " views (max_views)");
}

void check_request_bytes(const Limits& limits, size_t bytes) {
  DACPP_CHECK(static_cast<uint64_t>(bytes) <= static_cast<uint64_t>(limits.max_request_bytes),
              ErrorCode::InvalidArgument, "request of ", bytes, " bytes is over the limit of ",
              limits.max_request_bytes, " bytes (max_request_bytes)");
}

}  // namespace dacpp
