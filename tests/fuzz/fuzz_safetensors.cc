// libFuzzer target: the safetensors reader (header JSON, dtypes, offsets).
#include <cstddef>
#include <cstdint>

#include "formats/safetensors_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dacpp::fuzz::read_checkpoint(data, size,
                                      [](const std::string& path) { return dacpp::read_safetensors(path); });
}
