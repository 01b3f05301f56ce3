// libFuzzer target: the request image decoder's non-path half (server/image_source.h decode_image_payload: bare
// base64 or a data: URI, never a file) and base64 itself. Properties: decoded bytes re-encode to base64 that
// decodes back to the same bytes. The image decoders behind it have their own target (fuzz_image).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "server/image_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string src(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<uint8_t> bytes = dacpp::server::decode_image_payload(src, "fuzz.src");
    if (bytes.empty()) __builtin_trap();
    const std::string text = dacpp::server::encode_base64(bytes.data(), bytes.size());
    if (dacpp::server::decode_base64(text) != bytes) __builtin_trap();
  } catch (const dacpp::Error&) {
  }
  return 0;
}
