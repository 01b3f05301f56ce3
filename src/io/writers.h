// Result writers: PFM, 8-bit PNG, 16-bit PNG, NPY. Each one builds the file in memory, writes it to a temporary
// file in the destination directory and renames it into place, so a reader never sees half a file and a failure
// leaves no partial output. Every failure is Error{Io, "cannot write '<path>': <cause>"} (fault site
// "output.write"); bad arguments (null data, non-positive sizes) are InvalidArgument.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/image.h"

namespace dacpp::io {

// Writes `bytes` to `path` atomically (temporary file + rename), mode 0644.
void write_file_atomic(const std::string& path, const void* bytes, size_t size);

// Single-channel float PFM ("Pf", little-endian, scale -1.0). `values` is h×w, row 0 at the top; the file stores
// rows bottom to top, as the format requires.
void write_pfm(const std::string& path, const float* values, int height, int width);

// PNGs through libpng at zlib level 1 with Up-filtered rows (png_writer.cc says why). 8-bit: of an RGB image, or
// of a grey h×w buffer; 16-bit: greyscale of an h×w buffer.
void write_png8(const std::string& path, const Image& image);
void write_png8_gray(const std::string& path, const uint8_t* values, int height, int width);
void write_png16(const std::string& path, const uint16_t* values, int height, int width);

// The writers' argument check: InvalidArgument naming `what` and the path for no data, or a side that is not
// positive or exceeds max_side (PNG: libpng's 2^24).
void check_plane(const char* what, const std::string& path, const void* values, int height, int width,
                 int max_side = INT_MAX);

// Maps floats linearly so that lo → 0 and hi → 65535 (clamped; NaN → 0), for write_png16. hi must exceed lo.
std::vector<uint16_t> quantize_u16(const float* values, size_t count, float lo, float hi);

// NPY v1.0: little-endian float32 ('<f4'), C order, the given shape (any rank, including 0 for a scalar).
void write_npy(const std::string& path, const float* values, const std::vector<int64_t>& shape);

// The NPY bytes themselves (header + data), for callers that pack several arrays (e.g. an .npz).
std::vector<uint8_t> npy_bytes(const float* values, const std::vector<int64_t>& shape);

}  // namespace dacpp::io
