// Inputs found by the fuzzers (tests/fuzz, bench/fuzz.sh) that once crashed a reader or decoder. Each must now end
// in a dacpp::Error (or decode), never abort. Add every new crash input under tests/fixtures/fuzz/<target>/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.h"
#include "io/image.h"

namespace dacpp {
namespace {

std::vector<uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// stb_image 2.27 as built by Debian asserts in stbi__jpeg_huff_decode on this JPEG (a corrupt Huffman table); the
// abort depended on heap contents, so the CLI survived it by luck. Decoded by our own stb build now.
TEST(FuzzRegression, ImageInputsNeverAbort) {
  const std::filesystem::path dir = std::filesystem::path(DACPP_FIXTURES_DIR) / "fuzz" / "image";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::vector<uint8_t> bytes = read_bytes(e.path());
    ASSERT_FALSE(bytes.empty()) << e.path();
    io::ImageLimits limits;
    limits.max_pixels = int64_t{4} * 1000 * 1000;  // as the fuzz target
    for (int rep = 0; rep < 50; ++rep) {  // the original failure was heap-dependent: try it several times
      try {
        io::Image img = io::load_image_from_memory(bytes.data(), bytes.size(), limits, e.path().string());
        EXPECT_FALSE(img.empty());
      } catch (const Error& err) {
        EXPECT_EQ(err.code(), ErrorCode::InvalidArgument) << err.what();
      }
    }
    ++n;
  }
  EXPECT_GE(n, 1);
}

}  // namespace
}  // namespace dacpp
