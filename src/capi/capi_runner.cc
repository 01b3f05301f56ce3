// dacpp_runner_* and dacpp_run_*: per-worker runners and depth for a file, an encoded buffer or raw RGB.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "capi/capi_handles.h"
#include "io/image.h"

namespace dacpp::capi {
namespace {

int64_t to_limit(size_t v, const char* name) {
  DACPP_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), ErrorCode::InvalidArgument,
              "dacpp_runner_create: limits.", name, " ", v, " is too large");
  return static_cast<int64_t>(v);
}

Limits to_limits(const dacpp_limits& c) {
  Limits l;
  l.max_pixels = to_limit(c.max_pixels, "max_pixels");
  l.max_image_bytes = to_limit(c.max_image_bytes, "max_image_bytes");
  l.max_process_size = c.max_process_size;
  l.max_process_pixels = to_limit(c.max_process_pixels, "max_process_pixels");
  l.max_views = c.max_views;
  l.max_request_bytes = to_limit(c.max_request_bytes, "max_request_bytes");
  validate_limits(l);
  return l;
}

RunOptions to_run_options(const dacpp_run_params* params) {
  const dacpp_run_params p = params != nullptr ? *params : dacpp_run_default_params();
  RunOptions o;
  o.size = p.size;
  o.resize_to_input = p.resize_to_input != 0;
  o.focal_px = p.focal_px;
  return o;
}

// The runner's last_error is the message slot once the runner pointer is known to be valid.
template <typename Body>
dacpp_status run_guarded(dacpp_runner* runner, dacpp_result** out_result, const char* fn, Body&& body) noexcept {
  if (out_result != nullptr) *out_result = nullptr;
  if (runner == nullptr) {
    return call_guarded(thread_error_slot(), [&] { require(runner, fn, "runner"); });
  }
  return call_guarded(runner->last_error, [&] {
    require(out_result, fn, "out_result");
    auto result = std::make_unique<dacpp_result>();
    result->result = body();
    *out_result = result.release();
  });
}

io::Image copy_rgb(const Limits& limits, const unsigned char* rgb, int width, int height, size_t row_stride) {
  require(rgb, "dacpp_run_rgb", "rgb");
  check_pixel_limit(limits, width, height, "dacpp_run_rgb: image");
  const size_t row_bytes = static_cast<size_t>(width) * io::Image::kChannels;
  const size_t stride = row_stride == 0 ? row_bytes : row_stride;
  DACPP_CHECK(stride >= row_bytes, ErrorCode::InvalidArgument, "dacpp_run_rgb: row_stride ", row_stride,
              " is less than width*3 = ", row_bytes);
  io::Image img(height, width);
  for (int y = 0; y < height; ++y) std::memcpy(img.row(y), rgb + static_cast<size_t>(y) * stride, row_bytes);
  return img;
}

}  // namespace
}  // namespace dacpp::capi

using dacpp::capi::call_guarded;
using dacpp::capi::require;
using dacpp::capi::run_guarded;
using dacpp::capi::thread_error_slot;

extern "C" {

dacpp_runner_params dacpp_runner_default_params(void) {
  const dacpp::RunnerOptions ro;
  dacpp_runner_params p;
  p.threads = ro.threads;
  p.pos_cache_capacity = ro.pos_cache_capacity;
  p.apply_exif_orientation = 1;
  p.limits.max_pixels = static_cast<size_t>(ro.limits.max_pixels);
  p.limits.max_image_bytes = static_cast<size_t>(ro.limits.max_image_bytes);
  p.limits.max_process_size = ro.limits.max_process_size;
  p.limits.max_process_pixels = static_cast<size_t>(ro.limits.max_process_pixels);
  p.limits.max_views = ro.limits.max_views;
  p.limits.max_request_bytes = static_cast<size_t>(ro.limits.max_request_bytes);
  return p;
}

dacpp_status dacpp_runner_create(dacpp_model* model, const dacpp_runner_params* params, dacpp_runner** out_runner) {
  if (out_runner != nullptr) *out_runner = nullptr;
  return call_guarded(thread_error_slot(), [&] {
    require(out_runner, "dacpp_runner_create", "out_runner");
    require(model, "dacpp_runner_create", "model");
    const dacpp_runner_params p = params != nullptr ? *params : dacpp_runner_default_params();
    DACPP_CHECK(p.pos_cache_capacity >= 1, dacpp::ErrorCode::InvalidArgument,
                "dacpp_runner_create: pos_cache_capacity must be >= 1");
    dacpp::RunnerOptions ro;
    ro.threads = p.threads;
    ro.pos_cache_capacity = p.pos_cache_capacity;
    ro.limits = dacpp::capi::to_limits(p.limits);
    auto handle = std::make_unique<dacpp_runner>();
    handle->model = model->model;
    handle->limits = ro.limits;
    handle->apply_exif_orientation = p.apply_exif_orientation != 0;
    handle->runner = std::make_unique<dacpp::Runner>(handle->model, ro);
    *out_runner = handle.release();
  });
}

void dacpp_runner_free(dacpp_runner* runner) { delete runner; }

const char* dacpp_runner_last_error(const dacpp_runner* runner) {
  return runner != nullptr ? runner->last_error.c_str() : "dacpp_runner_last_error: runner is NULL";
}

dacpp_run_params dacpp_run_default_params(void) {
  dacpp_run_params p;
  p.size = 0;
  p.resize_to_input = 0;
  p.focal_px = 0.f;
  return p;
}

dacpp_status dacpp_run_file(dacpp_runner* runner, const char* path, const dacpp_run_params* params,
                            dacpp_result** out_result) {
  return run_guarded(runner, out_result, "dacpp_run_file", [&] {
    require(path, "dacpp_run_file", "path");
    const dacpp::RunOptions o = dacpp::capi::to_run_options(params);
    const dacpp::io::Image img =
        dacpp::io::load_image(path, dacpp::image_limits(runner->limits, runner->apply_exif_orientation));
    return runner->runner->run(img, o);
  });
}

dacpp_status dacpp_run_encoded(dacpp_runner* runner, const void* data, size_t size, const dacpp_run_params* params,
                               dacpp_result** out_result) {
  return run_guarded(runner, out_result, "dacpp_run_encoded", [&] {
    require(data, "dacpp_run_encoded", "data");
    const dacpp::RunOptions o = dacpp::capi::to_run_options(params);
    const dacpp::io::Image img = dacpp::io::load_image_from_memory(
        static_cast<const uint8_t*>(data), size,
        dacpp::image_limits(runner->limits, runner->apply_exif_orientation), "<buffer>");
    return runner->runner->run(img, o);
  });
}

dacpp_status dacpp_run_rgb(dacpp_runner* runner, const unsigned char* rgb, int width, int height, size_t row_stride,
                           const dacpp_run_params* params, dacpp_result** out_result) {
  return run_guarded(runner, out_result, "dacpp_run_rgb", [&] {
    const dacpp::RunOptions o = dacpp::capi::to_run_options(params);
    const dacpp::io::Image img = dacpp::capi::copy_rgb(runner->limits, rgb, width, height, row_stride);
    return runner->runner->run(img, o);
  });
}

}  // extern "C"
