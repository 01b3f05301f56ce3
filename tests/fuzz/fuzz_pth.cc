// libFuzzer target: the PyTorch .pth reader (zip archive, pickle VM, storages).
#include <cstddef>
#include <cstdint>

#include "formats/pth_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dacpp::fuzz::read_checkpoint(data, size, [](const std::string& path) { return dacpp::read_pth(path); });
}
