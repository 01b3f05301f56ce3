// write_png16: 16-bit greyscale PNG through libpng, encoded in memory. libpng reports errors by longjmp, so the
// encoding runs in a function holding only plain locals, and its error text becomes a dacpp::Error afterwards.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

struct PngSink {
  std::vector<uint8_t>* bytes;
  bool out_of_memory;
  char error[256];
};

void on_write(png_structp png, png_bytep data, png_size_t len) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  try {  // nothing may unwind through libpng's C frames
    sink->bytes->insert(sink->bytes->end(), data, data + len);
  } catch (...) {
    sink->out_of_memory = true;
  }
}

void on_flush(png_structp) {}

void on_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->error, sizeof(sink->error), "%s", msg != nullptr ? msg : "libpng error");
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

// Encodes big-endian 16-bit rows; returns false with sink->error set on failure. No C++ object with a destructor
// lives in this frame, so libpng's longjmp skips nothing.
bool encode(PngSink* sink, const uint8_t* be_rows, int height, int width) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, &on_error, &on_warning);
  if (png == nullptr) {
    std::snprintf(sink->error, sizeof(sink->error), "png_create_write_struct failed");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(sink->error, sizeof(sink->error), "png_create_info_struct failed");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, &on_write, &on_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 16,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const size_t stride = static_cast<size_t>(width) * 2;
  for (int y = 0; y < height; ++y) png_write_row(png, const_cast<png_bytep>(be_rows + stride * y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

void write_png16(const std::string& path, const uint16_t* values, int height, int width) {
  DACPP_CHECK(values != nullptr, ErrorCode::InvalidArgument, "write_png16 '", path, "': no data");
  DACPP_CHECK(height > 0 && width > 0 && width <= (1 << 24) && height <= (1 << 24), ErrorCode::InvalidArgument,
              "write_png16 '", path, "': bad size ", height, "x", width);
  const size_t n = static_cast<size_t>(height) * width;
  std::vector<uint8_t> be(n * 2);
  for (size_t i = 0; i < n; ++i) {
    be[2 * i] = static_cast<uint8_t>(values[i] >> 8);
    be[2 * i + 1] = static_cast<uint8_t>(values[i] & 0xFF);
  }
  std::vector<uint8_t> bytes;
  PngSink sink{&bytes, false, {0}};
  const bool ok = encode(&sink, be.data(), height, width);
  DACPP_CHECK(!sink.out_of_memory, ErrorCode::OutOfMemory, "cannot write '", path, "': out of memory encoding PNG");
  DACPP_CHECK(ok, ErrorCode::Io, "cannot write '", path, "': PNG encoding failed: ", sink.error);
  write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace dacpp::io
