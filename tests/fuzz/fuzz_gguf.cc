// libFuzzer target: the GGUF reader, then every tensor dequantized to f32 (the path Model::load takes).
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "formats/gguf_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dacpp::fuzz::MemFile file(data, size);
  if (!file.ok()) return 0;
  try {
    auto mf = dacpp::read_gguf(file.path());
    for (const dacpp::TensorRecord& r : mf->records()) {
      if (r.nbytes > (size_t{1} << 24)) continue;  // keep one input cheap; sizes are validated by the reader
      (void)mf->tensor_f32(r.name);
    }
  } catch (const dacpp::Error&) {
  }
  return 0;
}
