// libFuzzer target: the image decoders (JPEG through libjpeg-turbo, CMYK JPEG, PNG, BMP, ... through stb; EXIF
// orientation) from memory.
// The pixel limit is lowered so one input cannot allocate gigabytes; the limit check itself is what is tested.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "io/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dacpp::io::ImageLimits limits;
  limits.max_pixels = int64_t{4} * 1000 * 1000;
  try {
    dacpp::io::Image img = dacpp::io::load_image_from_memory(data, size, limits, "fuzz");
    volatile uint8_t sink = img.empty() ? 0 : img.data()[img.size_bytes() - 1];
    (void)sink;
  } catch (const dacpp::Error&) {
  }
  return 0;
}
