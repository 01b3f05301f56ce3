// JPEG structure checks: the EXIF orientation tag (and applying it), and truncation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/image.h"

namespace dacpp::io {

// The EXIF orientation (1..8) stored in a JPEG's APP1 "Exif" segment, IFD0 tag 0x0112; 1 when the bytes are not a
// JPEG, have no EXIF, or the EXIF is malformed or out of range (a broken tag never fails a decode). Every read is
// bounds-checked; both TIFF byte orders are handled.
int jpeg_exif_orientation(const uint8_t* bytes, size_t size);

// True when the bytes are a JPEG whose marker segments parse up to the scan and which has an end-of-image marker
// after the scan starts. stb_image decodes a JPEG cut short without complaint (it pads the missing data), so the
// decoder uses this to report truncation.
bool jpeg_looks_complete(const uint8_t* bytes, size_t size);

// The upright image for an EXIF orientation: 1 identity, 2 mirror left-right, 3 rotate 180, 4 mirror top-bottom,
// 5 transpose, 6 rotate 90° clockwise, 7 transverse, 8 rotate 90° counter-clockwise. 5..8 swap height and width.
// Throws InvalidArgument for a value outside 1..8.
Image apply_exif_orientation(const Image& image, int orientation);

}  // namespace dacpp::io
