// MappedFile::release_pages: the pages go out of the process's resident set, the bytes read back the same, and ranges
// outside the mapping or smaller than a page are left alone. Then the same through a placed ModelFile: a GGUF's
// weights copied by a placement (bf16 on the CPU) no longer count in the resident set.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "engine/model.h"
#include "formats/import.h"
#include "formats/mapped_file.h"
#include "models/model_test_util.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

size_t resident_bytes() {
  long pages = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<size_t>(resident) * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// Sums every byte (touches every page; the compiler cannot drop the reads).
uint64_t touch(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i];
  return s;
}

class ReleasePages : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::scratch_path("mapped", "pages.bin");
    bytes_.resize(kBytes);
    for (size_t i = 0; i < kBytes; ++i) bytes_[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(bytes_.data()), kBytes);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  static constexpr size_t kBytes = size_t{48} << 20;
  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(ReleasePages, LeaveTheResidentSetAndReadBackTheSame) {
  std::shared_ptr<MappedFile> f = MappedFile::open(path_);
  const uint64_t sum = touch(f->data(), f->size());
  const size_t before = resident_bytes();
  f->release_pages(f->data(), f->size());
  const size_t after = resident_bytes();
  EXPECT_GT(before, after + (size_t{40} << 20)) << "resident " << before << " -> " << after;
  EXPECT_EQ(touch(f->data(), f->size()), sum);
  EXPECT_EQ(std::memcmp(f->data(), bytes_.data(), kBytes), 0);
}

TEST_F(ReleasePages, PartialPagesAndForeignRangesAreLeftAlone) {
  std::shared_ptr<MappedFile> f = MappedFile::open(path_);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  f->release_pages(f->data() + 100, page);          // no whole page inside
  f->release_pages(f->data() + 100, 3 * page);      // the two whole pages inside only
  f->release_pages(f->data() + kBytes - 10, 1000);  // runs past the end: ignored
  std::vector<uint8_t> heap(4 * page, 7);
  f->release_pages(heap.data(), heap.size());  // not in the mapping: ignored
  EXPECT_EQ(heap, std::vector<uint8_t>(4 * page, 7));
  EXPECT_EQ(std::memcmp(f->data(), bytes_.data(), kBytes), 0);
}

TEST(PlacedModelFile, Bf16CopiesGiveBackTheMappedF32Weights) {
  if (!cpu::bf16_support().refusal.empty()) GTEST_SKIP() << cpu::bf16_support().refusal;
  // A DA2-S-wide model (about 100 MB of f32 weights) written as GGUF, loaded f32 and bf16 in turn.
  testing::SyntheticDims dims = testing::SyntheticDims::full_size('s');
  dims.grid = 4;
  const std::string path = testing::scratch_path("mapped", "da2s.gguf");
  write_gguf(*testing::SyntheticModel(dims, /*da3_mono=*/false).build(), path);
  size_t f32_growth = 0, bf16_growth = 0;
  {
    const size_t before = resident_bytes();
    std::shared_ptr<const Model> m = Model::load(path);
    f32_growth = resident_bytes() - before;  // f32 views into the mapping, touched by the load's NaN scan
  }
  {
    LoadOptions lo;
    lo.precision = DType::BF16;
    const size_t before = resident_bytes();
    std::shared_ptr<const Model> m = Model::load(path, lo);
    bf16_growth = resident_bytes() - before;  // the bf16 copies (half); their f32 pages given back
  }
  std::remove(path.c_str());
  EXPECT_GT(f32_growth, size_t{80} << 20);
  EXPECT_LT(bf16_growth, f32_growth * 2 / 3) << "f32 load +" << f32_growth << " B, bf16 load +" << bf16_growth << " B";
}

}  // namespace
}  // namespace dacpp
