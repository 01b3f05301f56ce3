// Image: a decoded 8-bit RGB picture (H×W×3, interleaved, rows contiguous, owning), and the decoders that make one
// from a file or from bytes in memory: JPEG through libjpeg-turbo (io/jpeg_decode.h: the pixels cv2.imread gives);
// CMYK JPEG, PNG, BMP, TGA, GIF first frame, PSD, HDR→8-bit and PIC through stb_image (PNM is compiled out, see
// io/stb_decode.h). Grey and grey+alpha become RGB by replication; alpha is dropped (as PIL's convert("RGB") does).
// JPEG EXIF orientation (tag 0x0112 in IFD0 of the APP1 "Exif" segment) is applied by default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_memory.h"

namespace dacpp::io {

class Image {
 public:
  static constexpr int kChannels = 3;

  Image() = default;
  // A zero-filled height×width RGB image. Throws InvalidArgument for a non-positive side.
  Image(int height, int width);
  // The same size without the zero fill, for a caller that writes every byte (a decoder, a rotation). Both throw
  // OutOfMemory, with the size, when the pixels cannot be allocated.
  static Image uninitialized(int height, int width);

  int height() const { return height_; }
  int width() const { return width_; }
  bool empty() const { return pixels_.empty(); }
  size_t size_bytes() const { return pixels_.size(); }
  uint8_t* data() { return pixels_.data(); }
  const uint8_t* data() const { return pixels_.data(); }
  // Pointer to row y (no bounds check: callers index within height()).
  uint8_t* row(int y) { return pixels_.data() + static_cast<size_t>(y) * width_ * kChannels; }
  const uint8_t* row(int y) const { return pixels_.data() + static_cast<size_t>(y) * width_ * kChannels; }

 private:
  int height_ = 0;
  int width_ = 0;
  // Large images in huge pages (core/host_memory.h: a 12 MP photo's 36 MB is 18 page faults, not ~9 000).
  std::vector<uint8_t, host_memory::BufferAllocator<uint8_t>> pixels_;
};

struct ImageLimits {
  // Largest accepted width×height, checked from the header before any pixel is decoded.
  int64_t max_pixels = int64_t{64} * 1000 * 1000;
  // Largest accepted encoded size in bytes, of a file (checked before it is read) or a buffer in memory.
  int64_t max_file_bytes = int64_t{1} << 30;
  // Most scans a JPEG may hold (a photo has 1 to ~20; a crafted progressive file of thousands takes minutes).
  int max_jpeg_scans = 256;
  // Apply the JPEG EXIF orientation (the official DA2/DA3 loaders do not; turn off for bit-parity with them).
  bool apply_exif_orientation = true;
};

// Decodes the image file at `path`. Errors (all name the file):
//   NotFound        the file does not exist
//   Io              it is a directory, or reading failed (fault site "file.read")
//   InvalidArgument not a decodable image, truncated, or over the limits (fault site "image.decode")
Image load_image(const std::string& path, const ImageLimits& limits = {});

// Same, from encoded bytes in memory; `name` is used in error messages.
Image load_image_from_memory(const uint8_t* bytes, size_t size, const ImageLimits& limits = {},
                             const std::string& name = "<memory>");

}  // namespace dacpp::io
