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

// Decodes to 8-bit RGB. Null on failure (see failure_reason()); also null, with *corrupt = true, when stb's
// internal consistency check failed during the decode.
Pixels load_rgb(const uint8_t* bytes, int len, int* width, int* height, bool* corrupt);

// stb's reason for the last failure on this thread; never null.
const char* failure_reason();

}  // namespace dacpp::io::stb
