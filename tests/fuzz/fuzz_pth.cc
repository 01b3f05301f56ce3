// libFuzzer target: the PyTorch .pth reader (zip archive, pickle VM, storages).
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "formats/pth_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dacpp::fuzz::MemFile file(data, size);
  if (!file.ok()) return 0;
  try {
    dacpp::CheckpointTensors ct = dacpp::read_pth(file.path());
    volatile uint8_t sink = 0;
    for (const dacpp::TensorRecord& r : ct.tensors)
      if (r.nbytes > 0) {
        const uint8_t* b = static_cast<const uint8_t*>(r.data);
        sink = sink ^ b[0] ^ b[r.nbytes - 1];
      }
    (void)sink;
  } catch (const dacpp::Error&) {
  }
  return 0;
}
