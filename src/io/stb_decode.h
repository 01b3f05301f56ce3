// stb_image compiled into dacpp (STB_IMAGE_STATIC, private to stb_decode.cc) instead of taken from Debian's libstb:
// that build keeps stb's assert() enabled, and a malformed JPEG reaches one (stbi__jpeg_huff_decode) and aborts
// the process — found by tests/fuzz/fuzz_image. Here a failed stb consistency check marks the decode corrupt
// and the image is rejected with an error instead. The RGB expansion is done here too (stb's own reads past its
// buffer for 16-bit PNM); JPEG Huffman tables are checked before stb sees them (io/jpeg_guard.h).
#pragma once

#include <cstdint>
#include <memory>

namespace dacpp::io::stb {

// Reads the header only: size and channel count. False when the bytes are no supported image.
bool info(const uint8_t* bytes, int len, int* width, int* height, int* comp);

using Pixels = std::unique_ptr<uint8_t, void (*)(void*)>;

// Decodes to 8 bits per channel in the file's own channel count (*channels: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA).
// Null on failure (see failure_reason()); also null, with *corrupt = true, when stb's internal consistency check
// failed during the decode or it produced a channel count or size it never does.
Pixels load(const uint8_t* bytes, int len, int* width, int* height, int* channels, bool* corrupt);

// load()'s `pixels` pixels of `channels` channels as RGB into `rgb` (pixels·3 bytes): grey and grey+alpha
// replicated, alpha dropped.
void to_rgb(const uint8_t* src, int channels, size_t pixels, uint8_t* rgb);

// stb's reason for the last failure on this thread; never null.
const char* failure_reason();

}  // namespace dacpp::io::stb
