#include "io/stb_decode.h"

namespace {
// Set by a failed STBI_ASSERT during the current decode on this thread; an error flag, not a cache.
thread_local bool t_stb_check_failed = false;
void stb_check_failed() { t_stb_check_failed = true; }
}  // namespace

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ASSERT(x) ((x) ? (void)0 : stb_check_failed())
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#include <stb_image.h>
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
  t_stb_check_failed = false;
  int comp = 0;
  Pixels px(stbi_load_from_memory(bytes, len, width, height, &comp, 3), &stbi_image_free);
  *corrupt = t_stb_check_failed;
  if (t_stb_check_failed) px.reset();
  return px;
}

const char* failure_reason() {
  const char* r = stbi_failure_reason();
  return r != nullptr ? r : "unknown reason";
}

}  // namespace dacpp::io::stb
