#include "io/stb_decode.h"

#include <cstdlib>

namespace {
// Set by a failed STBI_ASSERT during the current decode on this thread; an error flag, not a cache.
thread_local bool t_stb_check_failed = false;
void stb_check_failed() { t_stb_check_failed = true; }
}  // namespace

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_NO_PNM  // stb 2.27's PNM reader: integer overflow in header parsing and 16-bit buffer overreads
#define STBI_ASSERT(x) ((x) ? (void)0 : stb_check_failed())
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#include "../../third_party/stb/stb_image.h"  // v2.30, vendored: third_party/stb/README.md
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace dacpp::io::stb {

bool info(const uint8_t* bytes, int len, int* width, int* height, int* comp) {
  t_stb_check_failed = false;
  const bool ok = stbi_info_from_memory(bytes, len, width, height, comp) != 0;
  return ok && !t_stb_check_failed;
}

Pixels load_rgb(const uint8_t* bytes, int len, int* width, int* height, bool* corrupt) {
  // Decoded in the file's own channel count and expanded to RGB here: stb 2.27's channel conversion of 16-bit
  // PNM data sizes the buffer for 8 bits and reads past it (found by fuzz_image under ASan).
  t_stb_check_failed = false;
  int comp = 0;
  Pixels native(stbi_load_from_memory(bytes, len, width, height, &comp, 0), &stbi_image_free);
  *corrupt = t_stb_check_failed;
  Pixels none(nullptr, &std::free);
  if (t_stb_check_failed || !native || comp < 1 || comp > 4 || *width <= 0 || *height <= 0) {
    if (native && !t_stb_check_failed) *corrupt = true;  // decoded, but to a shape stb never produces
    return none;
  }
  const size_t n = static_cast<size_t>(*width) * static_cast<size_t>(*height);
  Pixels rgb(static_cast<uint8_t*>(std::malloc(n * 3)), &std::free);
  if (!rgb) return none;
  const uint8_t* src = native.get();
  uint8_t* dst = rgb.get();
  for (size_t i = 0; i < n; ++i, src += comp, dst += 3) {
    const bool grey = comp < 3;  // grey, grey+alpha: replicate; RGBA: drop alpha
    dst[0] = src[0];
    dst[1] = grey ? src[0] : src[1];
    dst[2] = grey ? src[0] : src[2];
  }
  return rgb;
}

const char* failure_reason() {
  const char* r = stbi_failure_reason();
  return r != nullptr ? r : "unknown reason";
}

}  // namespace dacpp::io::stb
