// EXIF orientation: a bounds-checked walk of the JPEG marker segments to APP1 "Exif\0\0", then of the TIFF header
// and IFD0 to tag 0x0112.
#include "io/exif_orientation.h"

#include <cstring>

#include "core/error.h"

namespace dacpp::io {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kTypeShort = 3;

// A bounds-checked reader over one byte range; every accessor returns false instead of reading past the end.
class ByteView {
 public:
  ByteView(const uint8_t* p, size_t n, bool little_endian) : p_(p), n_(n), le_(little_endian) {}
  bool u16(size_t off, uint16_t* v) const {
    if (off > n_ || n_ - off < 2) return false;
    *v = le_ ? static_cast<uint16_t>(p_[off] | (p_[off + 1] << 8))
             : static_cast<uint16_t>((p_[off] << 8) | p_[off + 1]);
    return true;
  }
  bool u32(size_t off, uint32_t* v) const {
    uint16_t a = 0, b = 0;
    if (!u16(off, &a) || !u16(off + 2, &b)) return false;
    *v = le_ ? (static_cast<uint32_t>(b) << 16) | a : (static_cast<uint32_t>(a) << 16) | b;
    return true;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  bool le_;
};

// Orientation from a TIFF block (the APP1 payload after "Exif\0\0"); 1 when absent or invalid.
int tiff_orientation(const uint8_t* p, size_t n) {
  if (n < 8) return 1;
  bool le;
  if (p[0] == 'I' && p[1] == 'I') le = true;
  else if (p[0] == 'M' && p[1] == 'M') le = false;
  else return 1;
  const ByteView v(p, n, le);
  uint16_t magic = 0, count = 0;
  uint32_t ifd = 0;
  if (!v.u16(2, &magic) || magic != 42 || !v.u32(4, &ifd) || !v.u16(ifd, &count)) return 1;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t entry = static_cast<size_t>(ifd) + 2 + static_cast<size_t>(i) * 12;
    uint16_t tag = 0, type = 0, value = 0;
    uint32_t n_values = 0;
    if (!v.u16(entry, &tag) || !v.u16(entry + 2, &type) || !v.u32(entry + 4, &n_values)) return 1;
    if (tag != kOrientationTag) continue;
    if (type != kTypeShort || n_values < 1 || !v.u16(entry + 8, &value)) return 1;
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

// Walks a JPEG's marker segments up to the first start-of-scan, calling fn(marker, payload, payload_len) for each
// segment with a length; fn returns false to stop. Returns the offset of the start-of-scan marker, or 0 when the
// walk ends without reaching one (not a JPEG, malformed, stopped early, or end of image).
template <typename Fn>
size_t walk_jpeg_segments(const uint8_t* bytes, size_t size, Fn fn) {
  if (bytes == nullptr || size < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) return 0;
  size_t pos = 2;
  while (pos + 4 <= size) {
    if (bytes[pos] != 0xFF) return 0;
    const uint8_t marker = bytes[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xDA) return pos;
    if (marker == 0xD9) return 0;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // markers without a length
      pos += 2;
      continue;
    }
    const size_t len = (static_cast<size_t>(bytes[pos + 2]) << 8) | bytes[pos + 3];
    if (len < 2 || len > size - pos - 2) return 0;
    if (!fn(marker, bytes + pos + 4, len - 2)) return 0;
    pos += 2 + len;
  }
  return 0;
}

}  // namespace

int jpeg_exif_orientation(const uint8_t* bytes, size_t size) {
  int orientation = 1;
  walk_jpeg_segments(bytes, size, [&](uint8_t marker, const uint8_t* seg, size_t seg_len) {
    if (marker != 0xE1 || seg_len < 6 || std::memcmp(seg, "Exif\0\0", 6) != 0) return true;
    orientation = tiff_orientation(seg + 6, seg_len - 6);
    return false;
  });
  return orientation;
}

bool jpeg_looks_complete(const uint8_t* bytes, size_t size) {
  const size_t scan = walk_jpeg_segments(bytes, size, [](uint8_t, const uint8_t*, size_t) { return true; });
  if (scan == 0) return false;
  for (size_t i = size; i >= scan + 4; --i) {
    if (bytes[i - 2] == 0xFF && bytes[i - 1] == 0xD9) return true;
  }
  return false;
}

Image apply_exif_orientation(const Image& image, int orientation) {
  DACPP_CHECK(orientation >= 1 && orientation <= 8, ErrorCode::InvalidArgument, "EXIF orientation ", orientation,
              " is outside 1..8");
  if (orientation == 1 || image.empty()) return image;
  const int h = image.height(), w = image.width();
  const bool swap = orientation >= 5;
  Image out = Image::uninitialized(swap ? w : h, swap ? h : w);  // every pixel written below
  for (int y = 0; y < out.height(); ++y) {
    uint8_t* dst = out.row(y);
    for (int x = 0; x < out.width(); ++x) {
      int sy = y, sx = x;  // source pixel of output (y, x)
      switch (orientation) {
        case 2: sx = w - 1 - x; break;
        case 3: sy = h - 1 - y; sx = w - 1 - x; break;
        case 4: sy = h - 1 - y; break;
        case 5: sy = x; sx = y; break;
        case 6: sy = h - 1 - x; sx = y; break;
        case 7: sy = h - 1 - x; sx = w - 1 - y; break;
        default: sy = x; sx = w - 1 - y; break;  // 8
      }
      const uint8_t* s = image.row(sy) + static_cast<size_t>(sx) * Image::kChannels;
      dst[x * 3 + 0] = s[0];
      dst[x * 3 + 1] = s[1];
      dst[x * 3 + 2] = s[2];
    }
  }
  return out;
}

}  // namespace dacpp::io
