#include "io/stb_decode.h"

#include <cstdlib>
#include <cstring>

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

Pixels load(const uint8_t* bytes, int len, int* width, int* height, int* channels, bool* corrupt) {
  // Decoded in the file's own channel count and expanded to RGB by to_rgb: stb 2.27's channel conversion of 16-bit
  // PNM data sizes the buffer for 8 bits and reads past it (found by fuzz_image under ASan).
  t_stb_check_failed = false;
  int comp = 0;
  Pixels native(stbi_load_from_memory(bytes, len, width, height, &comp, 0), &stbi_image_free);
  *corrupt = t_stb_check_failed;
  *channels = comp;
  if (t_stb_check_failed || !native || comp < 1 || comp > 4 || *width <= 0 || *height <= 0) {
    if (native && !t_stb_check_failed) *corrupt = true;  // decoded, but to a shape stb never produces
    return Pixels(nullptr, &std::free);
  }
  return native;
}

void to_rgb(const uint8_t* src, int channels, size_t pixels, uint8_t* rgb) {
  if (channels == 3) {
    std::memcpy(rgb, src, pixels * 3);
    return;
  }
  const bool grey = channels < 3;  // grey, grey+alpha: replicate; RGBA: drop alpha
  for (size_t i = 0; i < pixels; ++i, src += channels, rgb += 3) {
    rgb[0] = src[0];
    rgb[1] = grey ? src[0] : src[1];
    rgb[2] = grey ? src[0] : src[2];
  }
}

const char* failure_reason() {
  const char* r = stbi_failure_reason();
  return r != nullptr ? r : "unknown reason";
}

}  // namespace dacpp::io::stb
