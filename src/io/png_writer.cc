// The PNG writers (8-bit RGB and grey, 16-bit grey) through libpng, encoded in memory. libpng reports errors by
// longjmp, so the encoding runs in a function holding only plain locals, and its error text becomes a dacpp::Error
// afterwards.
//
// zlib level 1 and every row "Up"-filtered (its difference from the row above), as OpenCV's default PNG level is 1:
// depth maps and their colour maps are smooth, so the files stay about as small, and a 4000×3000 map encodes
// several times faster than at libpng's default (level 6, each row's filter chosen from all five) or through
// stb_image_write (level 8): docs/PERFORMANCE.md, session 40. The pixels are the same either way (lossless).
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

constexpr int kZlibLevel = 1;

// Encodes `height` rows of `stride` bytes (16-bit samples big-endian, as PNG stores them); color_type is
// PNG_COLOR_TYPE_GRAY or PNG_COLOR_TYPE_RGB. Returns false with sink->error set on failure. No C++ object with a
// destructor lives in this frame, so libpng's longjmp skips nothing.
bool encode(PngSink* sink, const uint8_t* rows, size_t stride, int height, int width, int bit_depth,
            int color_type) {
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
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth, color_type,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, kZlibLevel);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) png_write_row(png, const_cast<png_bytep>(rows + stride * y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

void write_png(const std::string& path, const uint8_t* rows, size_t stride, int height, int width,
               int bit_depth, int color_type) {
  std::vector<uint8_t> bytes;
  bytes.reserve(stride * static_cast<size_t>(height) / 2);  // room for most maps' encodings: few regrowths
  PngSink sink{&bytes, false, {0}};
  const bool ok = encode(&sink, rows, stride, height, width, bit_depth, color_type);
  DACPP_CHECK(!sink.out_of_memory, ErrorCode::OutOfMemory, "cannot write '", path, "': out of memory encoding PNG");
  DACPP_CHECK(ok, ErrorCode::Io, "cannot write '", path, "': PNG encoding failed: ", sink.error);
  write_file_atomic(path, bytes.data(), bytes.size());
}

void check_size(const char* what, const std::string& path, const void* values, int height, int width) {
  DACPP_CHECK(values != nullptr, ErrorCode::InvalidArgument, what, " '", path, "': no data");
  DACPP_CHECK(height > 0 && width > 0 && width <= (1 << 24) && height <= (1 << 24), ErrorCode::InvalidArgument,
              what, " '", path, "': bad size ", height, "x", width);
}

}  // namespace

void write_png8(const std::string& path, const Image& image) {
  check_size("write_png8", path, image.data(), image.height(), image.width());
  write_png(path, image.data(), static_cast<size_t>(image.width()) * Image::kChannels, image.height(),
            image.width(), 8, PNG_COLOR_TYPE_RGB);
}

void write_png8_gray(const std::string& path, const uint8_t* values, int height, int width) {
  check_size("write_png8_gray", path, values, height, width);
  write_png(path, values, static_cast<size_t>(width), height, width, 8, PNG_COLOR_TYPE_GRAY);
}

void write_png16(const std::string& path, const uint16_t* values, int height, int width) {
  check_size("write_png16", path, values, height, width);
  const size_t n = static_cast<size_t>(height) * width;
  std::vector<uint8_t> be(n * 2);
  for (size_t i = 0; i < n; ++i) {
    be[2 * i] = static_cast<uint8_t>(values[i] >> 8);
    be[2 * i + 1] = static_cast<uint8_t>(values[i] & 0xFF);
  }
  write_png(path, be.data(), static_cast<size_t>(width) * 2, height, width, 16, PNG_COLOR_TYPE_GRAY);
}

}  // namespace dacpp::io
