// core/host_memory: large host buffers as huge-page mappings (Tensor storage, image bytes), the heap below
// kHugeFrom, and DACPP_HUGE_PAGES / ASan keeping every buffer on the heap.
#include "core/host_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/tensor.h"
#include "io/image.h"

namespace dacpp {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool aligned_2mib(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (2 * kMiB) == 0;
}

TEST(HostMemory, SizesFromKHugeFromAreMapped) {
  EXPECT_FALSE(host_memory::maps_huge(host_memory::kHugeFrom - 1));
  EXPECT_FALSE(host_memory::maps_huge(0));
  EXPECT_FALSE(host_memory::maps_huge(static_cast<size_t>(-1)));  // no rounding overflow
  EXPECT_EQ(host_memory::mapped_length(host_memory::kHugeFrom + 1), host_memory::kHugeFrom + 2 * kMiB);
  EXPECT_EQ(host_memory::mapped_length(4 * kMiB), 4 * kMiB);
}

TEST(HostMemory, MapIsAlignedWritableAndReleased) {
  const size_t bytes = 9 * kMiB + 3;
  for (int round = 0; round < 3; ++round) {  // mapped and released again: nothing accumulates
    auto* p = static_cast<uint8_t*>(host_memory::map(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned_2mib(p));
    std::memset(p, 0xA5, bytes);
    EXPECT_EQ(p[0], 0xA5);
    EXPECT_EQ(p[bytes - 1], 0xA5);
    host_memory::unmap(p, bytes);
  }
  host_memory::unmap(nullptr, bytes);  // a no-op, as free(nullptr)
}

TEST(HostMemory, LargeTensorsAndImagesUseTheMappings) {
  if (!host_memory::maps_huge(host_memory::kHugeFrom))
    GTEST_SKIP() << "huge mappings off here (ASan or DACPP_HUGE_PAGES=0)";
  const Tensor big = Tensor::zeros({1, 2048, 1024 + 1}, DType::F32, "big");  // 8 MiB + 8 KiB
  EXPECT_TRUE(aligned_2mib(big.raw()));
  const float* f = big.data<float>();
  EXPECT_EQ(f[0], 0.f);
  EXPECT_EQ(f[big.numel() - 1], 0.f);
  const Tensor small = Tensor::empty({1024}, DType::F32, "small");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.raw()) % 64, 0u);  // the heap path keeps its 64-byte alignment

  const io::Image img(2000, 1500);  // 9 MB: zero-filled in a mapping
  EXPECT_TRUE(aligned_2mib(img.data()));
  EXPECT_EQ(img.data()[0], 0);
  EXPECT_EQ(img.data()[img.size_bytes() - 1], 0);
  io::Image copy = img;  // a deep copy, as before
  copy.data()[0] = 7;
  EXPECT_EQ(img.data()[0], 0);
}

TEST(HostMemory, BufferAllocatorVectorsGrowAndShrinkAcrossTheThreshold) {
  std::vector<uint8_t, host_memory::BufferAllocator<uint8_t>> v;
  for (size_t n : {size_t{100}, host_memory::kHugeFrom + 5, 3 * kMiB, 2 * host_memory::kHugeFrom, size_t{0}}) {
    v.assign(n, 0x3C);
    ASSERT_EQ(v.size(), n);
    if (n > 0) {
      EXPECT_EQ(v.front(), 0x3C);
      EXPECT_EQ(v.back(), 0x3C);
    }
    v.shrink_to_fit();
  }
  const io::Image raw = io::Image::uninitialized(3, 4);
  EXPECT_EQ(raw.size_bytes(), 3u * 4u * 3u);
  EXPECT_THROW(io::Image::uninitialized(0, 4), Error);
}

}  // namespace
}  // namespace dacpp
