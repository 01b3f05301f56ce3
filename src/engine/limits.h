// Limits: the resource bounds every request is checked against before any work is done (issue 6, "never crash";
// docs/errors.md "Limits"). An input over a limit is refused with InvalidArgument naming the limit and the numbers,
// never decoded, resized or run. Every field is configurable (RunnerOptions::limits, the C API's runner params);
// the defaults admit any photograph a camera produces and bound the memory one forward can ask for.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/image.h"

namespace dacpp {

struct RunOptions;

namespace pipeline {
struct PreprocessOptions;
}

struct Limits {
  // Image width × height: the size an encoded image's header declares (checked before decoding), the decoded
  // image and raw RGB input.
  int64_t max_pixels = int64_t{64} * 1000 * 1000;
  // Encoded image size in bytes (a file, or a buffer handed over in memory).
  int64_t max_image_bytes = int64_t{256} << 20;
  // RunOptions::size (the processing target side); 0 (the model default) is always allowed.
  int max_process_size = 4096;
  // Network input height × width after preprocessing (activation memory and attention cost grow with it).
  int64_t max_process_pixels = int64_t{4096} * 4096;
  // Images in one multi-view request.
  int max_views = 64;
  // Bytes of one request body (the server's HTTP / gRPC payload, all images together).
  int64_t max_request_bytes = int64_t{512} << 20;
};

// Throws InvalidArgument when a limit is not positive.
void validate_limits(const Limits& limits);

// The decoder options that enforce `limits` (pixel count from the header, encoded size).
io::ImageLimits image_limits(const Limits& limits, bool apply_exif_orientation = true);

// Before a run: the image's pixel count, the requested size and the size preprocessing will produce.
void check_run_limits(const Limits& limits, const io::Image& image, const RunOptions& options,
                      const pipeline::PreprocessOptions& preprocess);

// A raw pixel buffer of width × height before it is copied (C API, server).
void check_pixel_limit(const Limits& limits, int64_t width, int64_t height, const char* what);

// The number of views of one multi-view request.
void check_view_count(const Limits& limits, size_t views);

// The size of one request body.
void check_request_bytes(const Limits& limits, size_t bytes);

}  // namespace dacpp
