// Image decoding: JPEG through libjpeg-turbo (io/jpeg_decode.h), CMYK JPEGs and every other format through stb_image
// (compiled in: io/stb_decode.h), with limits checked from the header first.
#include "io/image.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#include "core/error.h"
#include "core/fault.h"
#include "io/exif_orientation.h"
#include "io/jpeg_decode.h"
#include "io/jpeg_guard.h"
#include "io/stb_decode.h"

namespace dacpp::io {

Image::Image(int height, int width) : Image(uninitialized(height, width)) {
  std::memset(pixels_.data(), 0, pixels_.size());
}

Image Image::uninitialized(int height, int width) {
  DACPP_CHECK(height > 0 && width > 0, ErrorCode::InvalidArgument, "image size ", height, "x", width,
              " must be positive");
  Image img;
  img.height_ = height;
  img.width_ = width;
  const size_t bytes = static_cast<size_t>(height) * static_cast<size_t>(width) * kChannels;
  try {
    img.pixels_.resize(bytes);
  } catch (const std::bad_alloc&) {  // std::bad_array_new_length too
    DACPP_THROW(ErrorCode::OutOfMemory, "image of ", width, "x", height, ": cannot allocate ", bytes, " bytes");
  } catch (const std::length_error&) {  // over the vector's max_size
    DACPP_THROW(ErrorCode::OutOfMemory, "image of ", width, "x", height, ": ", bytes, " bytes is more than can be held");
  }
  return img;
}

namespace {

bool is_jpeg(const uint8_t* p, size_t n) { return n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF; }

using Bytes = std::vector<uint8_t, host_memory::BufferAllocator<uint8_t>>;

Bytes read_whole_file(const std::string& path, const ImageLimits& limits) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      DACPP_THROW(ErrorCode::NotFound, "image file '", path, "' not found");
    DACPP_THROW(ErrorCode::Io, "cannot open image file '", path, "': ", std::strerror(err));
  }
  DACPP_CHECK(!S_ISDIR(st.st_mode), ErrorCode::Io, "'", path, "' is a directory, not an image file");
  DACPP_CHECK(st.st_size <= limits.max_file_bytes, ErrorCode::InvalidArgument, "image file '", path, "' is ",
              static_cast<int64_t>(st.st_size), " bytes, over the limit of ", limits.max_file_bytes, " bytes");
  DACPP_FAULT_POINT("file.read", ErrorCode::Io, "reading image file '", path, "'");
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) DACPP_THROW(ErrorCode::Io, "cannot open image file '", path, "': ", std::strerror(errno));
  Bytes bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));  // the usual case: one buffer, no regrowth
  uint8_t chunk[1 << 16];
  for (;;) {
    const size_t got = std::fread(chunk, 1, sizeof(chunk), f.get());
    bytes.insert(bytes.end(), chunk, chunk + got);
    DACPP_CHECK(static_cast<int64_t>(bytes.size()) <= limits.max_file_bytes, ErrorCode::InvalidArgument,
                "image file '", path, "' is over the limit of ", limits.max_file_bytes, " bytes");
    if (got < sizeof(chunk)) break;
  }
  if (std::ferror(f.get())) DACPP_THROW(ErrorCode::Io, "cannot read image file '", path, "': ", std::strerror(errno));
  return bytes;
}

void check_pixels(int w, int h, const ImageLimits& limits, const std::string& name) {
  const int64_t pixels = static_cast<int64_t>(w) * h;
  DACPP_CHECK(w > 0 && h > 0 && pixels <= limits.max_pixels, ErrorCode::InvalidArgument, "image '", name, "' is ",
              w, "x", h, " = ", pixels, " pixels, over the limit of ", limits.max_pixels, " pixels");
}

// A JPEG in grey, YCbCr or RGB through libjpeg; an empty image for CMYK / YCCK, which stb converts.
Image decode_jpeg(const uint8_t* bytes, size_t size, const ImageLimits& limits, const std::string& name) {
  jpeg::Reader reader(limits.max_jpeg_scans);
  if (!reader.read_header(bytes, size))
    DACPP_THROW(ErrorCode::InvalidArgument, "cannot decode image '", name, "': ", reader.error());
  if (!reader.rgb_output()) return Image();
  const int w = reader.width(), h = reader.height();
  check_pixels(w, h, limits, name);
  Image img = Image::uninitialized(h, w);
  if (!reader.decode(img.data(), static_cast<size_t>(w) * Image::kChannels))
    DACPP_THROW(ErrorCode::InvalidArgument, "cannot decode image '", name, "' (", w, "x", h, "): ", reader.error());
  return img;
}

Image decode_stb(const uint8_t* bytes, size_t size, const ImageLimits& limits, const std::string& name) {
  DACPP_CHECK(size <= static_cast<size_t>(INT_MAX), ErrorCode::InvalidArgument, "image '", name, "' is ", size,
              " bytes, more than the decoder accepts");
  const int len = static_cast<int>(size);
  // Before stb reads any header: its header pass already builds the Huffman tables.
  check_jpeg_huffman_tables(bytes, size, name);
  int w = 0, h = 0, comp = 0;
  if (!stb::info(bytes, len, &w, &h, &comp))
    DACPP_THROW(ErrorCode::InvalidArgument, "cannot decode image '", name, "': ", stb::failure_reason(),
                " (supported: JPEG, PNG, BMP, TGA, GIF, PSD, HDR, PIC)");
  check_pixels(w, h, limits, name);
  int dw = 0, dh = 0;
  bool corrupt = false;
  int channels = 0;
  const stb::Pixels px = stb::load(bytes, len, &dw, &dh, &channels, &corrupt);
  DACPP_CHECK(!corrupt, ErrorCode::InvalidArgument, "cannot decode image '", name, "' (", w, "x", h,
              "): corrupt data (the decoder's consistency check failed)");
  if (!px)
    DACPP_THROW(ErrorCode::InvalidArgument, "cannot decode image '", name, "' (", w, "x", h, "): ", stb::failure_reason());
  DACPP_CHECK(dw == w && dh == h, ErrorCode::InvalidArgument, "image '", name, "': header says ", w, "x", h,
              " but the decoder produced ", dw, "x", dh);
  Image img = Image::uninitialized(h, w);
  stb::to_rgb(px.get(), channels, static_cast<size_t>(w) * static_cast<size_t>(h), img.data());
  return img;
}

}  // namespace

Image load_image_from_memory(const uint8_t* bytes, size_t size, const ImageLimits& limits, const std::string& name) {
  DACPP_FAULT_POINT("image.decode", ErrorCode::InvalidArgument, "decoding image '", name, "'");
  DACPP_CHECK(bytes != nullptr && size > 0, ErrorCode::InvalidArgument, "image '", name, "' is empty (0 bytes)");
  DACPP_CHECK(static_cast<uint64_t>(size) <= static_cast<uint64_t>(limits.max_file_bytes),
              ErrorCode::InvalidArgument, "image '", name, "' is ", size, " bytes, over the limit of ",
              limits.max_file_bytes, " bytes");
  const bool jpeg = is_jpeg(bytes, size);
  DACPP_CHECK(!jpeg || jpeg_looks_complete(bytes, size), ErrorCode::InvalidArgument, "cannot decode image '", name,
              "': truncated or malformed JPEG (no complete marker structure and end-of-image marker)");
  Image img;
  if (jpeg) img = decode_jpeg(bytes, size, limits, name);
  if (img.empty()) img = decode_stb(bytes, size, limits, name);
  if (jpeg && limits.apply_exif_orientation) {
    const int orientation = jpeg_exif_orientation(bytes, size);
    if (orientation != 1) return apply_exif_orientation(img, orientation);
  }
  return img;
}

Image load_image(const std::string& path, const ImageLimits& limits) {
  const Bytes bytes = read_whole_file(path, limits);
  DACPP_CHECK(!bytes.empty(), ErrorCode::InvalidArgument, "image file '", path, "' is empty (0 bytes)");
  return load_image_from_memory(bytes.data(), bytes.size(), limits, path);
}

}  // namespace dacpp::io
