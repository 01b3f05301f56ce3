// Writers: byte layout of PFM / NPY, PNG round trips (8 and 16 bit), atomic replacement and failures.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>
#include <stb_image.h>
#include <zlib.h>

#include "core/error.h"
#include "core/fault.h"
#include "io/image.h"
#include "io/writers.h"
#include "util/npy_read.h"
#include "util/scratch.h"

namespace dacpp::io {
namespace {

// A fresh empty directory per test.
class WritersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::dacpp::testing::scratch_path_for_test("writers");
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override {
    for (const std::string& n : entries()) std::remove((dir_ + "/" + n).c_str());
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
      closedir(d);
    }
    return out;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(WritersTest, PfmIsBottomToTopLittleEndian) {
  const float v[6] = {1.5f, -2.f, 3.25f, 4.f, 5.f, 1e-3f};  // 2 rows × 3
  write_pfm(path("d.pfm"), v, 2, 3);
  const std::vector<uint8_t> b = testing::read_file_bytes(path("d.pfm"));
  const std::string header = "Pf\n3 2\n-1.0\n";
  ASSERT_EQ(b.size(), header.size() + 24);
  EXPECT_EQ(std::string(b.begin(), b.begin() + header.size()), header);
  float stored[6];
  std::memcpy(stored, b.data() + header.size(), 24);  // this host is little-endian (x86-64 / aarch64)
  const float expect[6] = {4.f, 5.f, 1e-3f, 1.5f, -2.f, 3.25f};  // bottom row first
  for (int i = 0; i < 6; ++i) EXPECT_EQ(stored[i], expect[i]) << i;
  EXPECT_EQ(entries().size(), 1u);  // no temporary file left behind
}

TEST_F(WritersTest, NpyHeaderAndData) {
  const float v[6] = {0.5f, 1.f, 2.f, 3.f, -4.f, 7.25f};
  struct Case { std::vector<int64_t> shape; const char* spelled; size_t n; };
  const Case cases[] = {{{2, 3}, "'shape': (2, 3), }", 6}, {{6}, "'shape': (6,), }", 6},
                        {{}, "'shape': (), }", 1}, {{1, 2, 1, 3}, "'shape': (1, 2, 1, 3), }", 6},
                        {{0, 4}, "'shape': (0, 4), }", 0}};
  for (const Case& c : cases) {
    write_npy(path("a.npy"), v, c.shape);
    testing::NpyArray a;
    std::string err;
    ASSERT_TRUE(testing::parse_npy(testing::read_file_bytes(path("a.npy")), &a, &err)) << err;
    EXPECT_NE(a.header.find(c.spelled), std::string::npos) << a.header;
    EXPECT_EQ(a.data_offset % 64, 0u) << a.header;
    EXPECT_EQ(a.header.back(), '\n');
    EXPECT_EQ(a.shape, c.shape);
    ASSERT_EQ(a.values.size(), c.n);
    for (size_t i = 0; i < c.n; ++i) EXPECT_EQ(a.values[i], v[i]);
  }
  EXPECT_THROW(write_npy(path("b.npy"), v, {2, -3}), Error);
}

// The one-channel PNG at `file` read back by stb (8- or 16-bit by T): h×w, its samples equal to `want`.
template <typename T>
void expect_grey_png(const std::string& file, const T* want, int h, int w) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "8- or 16-bit samples");
  int bw = 0, bh = 0, comp = 0;
  void* px = sizeof(T) == 2 ? static_cast<void*>(stbi_load_16(file.c_str(), &bw, &bh, &comp, 0))
                            : static_cast<void*>(stbi_load(file.c_str(), &bw, &bh, &comp, 0));
  ASSERT_NE(px, nullptr) << stbi_failure_reason();
  EXPECT_EQ(comp, 1);
  if (bw == w && bh == h) {
    const T* got = static_cast<const T*>(px);
    for (size_t i = 0; i < static_cast<size_t>(h) * w; ++i)
      if (got[i] != want[i]) {
        ADD_FAILURE() << file << ": sample " << i << " is " << +got[i] << ", expected " << +want[i];
        break;
      }
  } else {
    ADD_FAILURE() << file << " is " << bw << "x" << bh << ", expected " << w << "x" << h;
  }
  stbi_image_free(px);
}

TEST_F(WritersTest, Png16RoundTrip) {
  std::vector<uint16_t> v(7 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i * 1871 + 3);
  write_png16(path("d16.png"), v.data(), 7, 5);
  expect_grey_png(path("d16.png"), v.data(), 7, 5);
}

TEST_F(WritersTest, QuantizeU16) {
  const float v[5] = {-1.f, 0.f, 0.5f, 1.f, NAN};
  const std::vector<uint16_t> q = quantize_u16(v, 5, 0.f, 1.f);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], 32768);  // 32767.5 rounds away from zero
  EXPECT_EQ(q[3], 65535);
  EXPECT_EQ(q[4], 0);
  EXPECT_THROW(quantize_u16(v, 5, 1.f, 1.f), Error);
}

TEST_F(WritersTest, Png8RgbRoundTripAndReplace) {
  Image img(4, 6);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data()[i] = static_cast<uint8_t>(i * 13 + 1);
  write_png8(path("c.png"), img);
  write_png8(path("c.png"), img);  // replacing an existing file works
  const Image back = load_image(path("c.png"));
  ASSERT_EQ(back.size_bytes(), img.size_bytes());
  EXPECT_EQ(0, std::memcmp(back.data(), img.data(), img.size_bytes()));
  EXPECT_EQ(entries().size(), 1u);
}

// Grey 8-bit through libpng (level 1, Up-filtered rows): the file decodes to the same bytes, one channel.
TEST_F(WritersTest, Png8GrayRoundTrip) {
  const int h = 37, w = 53;
  std::vector<uint8_t> v(static_cast<size_t>(h) * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 7) ^ (i >> 3));
  write_png8_gray(path("g.png"), v.data(), h, w);
  expect_grey_png(path("g.png"), v.data(), h, w);
  EXPECT_THROW(write_png8_gray(path("g2.png"), nullptr, h, w), Error);
  EXPECT_THROW(write_png8_gray(path("g2.png"), v.data(), 0, w), Error);
}

// A PNG's chunks checked the way a strict reader would: every CRC, and the IDAT payload inflated by zlib, which
// checks the stream's Adler-32. Returns the inflated (filtered) rows and the number of IDAT chunks.
std::vector<uint8_t> checked_idat(const std::vector<uint8_t>& png, int* idat_chunks) {
  std::vector<uint8_t> idat;
  *idat_chunks = 0;
  size_t pos = 8;
  bool end = false;
  while (pos + 12 <= png.size() && !end) {
    const size_t len =
        (size_t{png[pos]} << 24) | (size_t{png[pos + 1]} << 16) | (size_t{png[pos + 2]} << 8) | png[pos + 3];
    EXPECT_LE(pos + 12 + len, png.size());
    if (pos + 12 + len > png.size()) return {};
    const uint8_t* type = &png[pos + 4];
    const uLong crc = crc32(0, type, static_cast<uInt>(4 + len));
    const uLong stored = (uLong{png[pos + 8 + len]} << 24) | (uLong{png[pos + 9 + len]} << 16) |
                         (uLong{png[pos + 10 + len]} << 8) | png[pos + 11 + len];
    EXPECT_EQ(crc, stored) << "chunk at byte " << pos;
    if (std::memcmp(type, "IDAT", 4) == 0) {
      idat.insert(idat.end(), type + 4, type + 4 + len);
      ++*idat_chunks;
    }
    end = std::memcmp(type, "IEND", 4) == 0;
    pos += 12 + len;
  }
  EXPECT_TRUE(end) << "no IEND";
  EXPECT_EQ(pos, png.size());
  std::vector<uint8_t> rows(64 << 20);
  uLongf got = rows.size();
  EXPECT_EQ(uncompress(rows.data(), &got, idat.data(), static_cast<uLong>(idat.size())), Z_OK);
  rows.resize(got);
  return rows;
}

// Maps large enough to be deflated in several strips on several threads (png_writer.cc): stb reads back the same
// samples, every chunk's CRC and the zlib stream's Adler-32 check out, and the rows are Up-filtered.
TEST_F(WritersTest, LargePngsDeflateInStripsToValidFiles) {
  const int h = 1500, w = 1100;  // 16-bit: 3.3 MB of filtered rows, 3 strips on a machine of 3+ cores
  std::vector<uint16_t> d(static_cast<size_t>(h) * w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      d[static_cast<size_t>(y) * w + x] = static_cast<uint16_t>(20000 + 9000 * std::sin(0.01 * x + 0.004 * y) +
                                                                 ((x * 13 + y * 7) % 17));
  write_png16(path("big16.png"), d.data(), h, w);
  expect_grey_png(path("big16.png"), d.data(), h, w);
  int chunks = 0;
  const std::vector<uint8_t> rows = checked_idat(testing::read_file_bytes(path("big16.png")), &chunks);
  ASSERT_EQ(rows.size(), static_cast<size_t>(h) * (2 * w + 1));
  EXPECT_GE(chunks, 3);  // the zlib header, at least one strip, the Adler-32
  for (int y = 0; y < h; y += 97) EXPECT_EQ(rows[static_cast<size_t>(y) * (2 * w + 1)], 2) << "row " << y;

  Image img(1200, 1700);  // 8-bit RGB: 6.1 MB
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width() * 3; ++x) img.row(y)[x] = static_cast<uint8_t>((x / 3 + 2 * y + x % 3 * 40) & 0xFF);
  write_png8(path("big.png"), img);
  const Image back = load_image(path("big.png"));
  ASSERT_EQ(back.height(), img.height());
  ASSERT_EQ(back.width(), img.width());
  EXPECT_EQ(0, std::memcmp(back.data(), img.data(), img.size_bytes()));
  (void)checked_idat(testing::read_file_bytes(path("big.png")), &chunks);
}

// A strip whose deflate fails (zlib out of memory; fault site "png.deflate", as a failed deflateInit2 on one of the
// threads) is OutOfMemory naming the file, and no file is left; the next write succeeds.
TEST_F(WritersTest, PngStripFailureIsOutOfMemoryNamingThePath) {
  const int h = 1500, w = 1100;  // several strips
  std::vector<uint16_t> d(static_cast<size_t>(h) * w, 1234);
  // The first strip, and (where there are two cores, so two strips) another one, on another thread.
  for (const char* spec : {"png.deflate", "png.deflate:2"}) {
    if (std::string(spec) == "png.deflate:2" && omp_get_num_procs() < 2) continue;
    fault::configure(spec);
    try {
      write_png16(path("f.png"), d.data(), h, w);
      ADD_FAILURE() << spec << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
      EXPECT_NE(std::string(e.what()).find(path("f.png")), std::string::npos) << e.what();
    }
    EXPECT_TRUE(entries().empty()) << spec;
  }
  fault::configure("");
  write_png16(path("f.png"), d.data(), h, w);
  expect_grey_png(path("f.png"), d.data(), h, w);
}

TEST_F(WritersTest, FailuresAreIoErrorsNamingThePath) {
  const float v[4] = {1, 2, 3, 4};
  const std::string missing = path("no/such/dir/x.pfm");
  try {
    write_pfm(missing, v, 2, 2);
    FAIL() << "no error writing into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("cannot write '" + missing + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  ::mkdir(path("sub").c_str(), 0755);
  try {
    write_npy(path("sub"), v, {4});  // the target is a directory
    FAIL() << "no error replacing a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
  }
  ::rmdir(path("sub").c_str());
  fault::configure("output.write");
  try {
    write_pfm(path("f.pfm"), v, 2, 2);
    FAIL() << "no injected fault";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
  }
  fault::configure("");
  EXPECT_TRUE(entries().empty()) << "a failed write left files behind";
  EXPECT_THROW(write_pfm(path("g.pfm"), nullptr, 2, 2), Error);
  EXPECT_THROW(write_pfm(path("g.pfm"), v, 0, 2), Error);
  EXPECT_THROW(write_png8(path("g.png"), Image()), Error);
}

}  // namespace
}  // namespace dacpp::io
