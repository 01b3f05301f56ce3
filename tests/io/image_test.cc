// Image decoding: formats, EXIF orientation, limits and every failure path.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fault.h"
#include "io/exif_orientation.h"
#include "io/image.h"
#include "io/writers.h"
#include "util/npy_read.h"
#include "util/scratch.h"

namespace dacpp::io {
namespace {

const std::string kImages = std::string(DACPP_FIXTURES_DIR) + "/images";

std::string temp_path(const std::string& name) {
  return ::dacpp::testing::scratch_path("io", name);
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!b.empty()) {
    ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
  }
  std::fclose(f);
}

ErrorCode code_of(const std::function<void()>& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no dacpp::Error thrown";
  return ErrorCode::Internal;
}

bool same_pixel(const Image& a, int ay, int ax, const Image& b, int by, int bx) {
  for (int c = 0; c < 3; ++c)
    if (a.row(ay)[ax * 3 + c] != b.row(by)[bx * 3 + c]) return false;
  return true;
}

// A 3×4 image whose pixels are all distinct.
Image numbered() {
  Image img(3, 4);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) img.row(y)[x * 3] = static_cast<uint8_t>(10 * y + x + 1);
  return img;
}

TEST(ImageLoad, PngDecodesAndRoundTrips) {
  const Image img = load_image(kImages + "/sample_small.png");
  ASSERT_EQ(img.height(), 61);
  ASSERT_EQ(img.width(), 83);
  const std::string out = temp_path("roundtrip.png");
  write_png8(out, img);
  const Image back = load_image(out);
  ASSERT_EQ(back.size_bytes(), img.size_bytes());
  EXPECT_EQ(0, std::memcmp(back.data(), img.data(), img.size_bytes()));
  std::remove(out.c_str());
}

TEST(ImageLoad, GrayPngBecomesRgb) {
  std::vector<uint8_t> g(5 * 7);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint8_t>(i * 5 + 3);
  const std::string out = temp_path("gray.png");
  write_png8_gray(out, g.data(), 5, 7);
  const Image img = load_image(out);
  ASSERT_EQ(img.height(), 5);
  ASSERT_EQ(img.width(), 7);
  for (size_t i = 0; i < g.size(); ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(img.data()[i * 3 + c], g[i]) << i;
  std::remove(out.c_str());
}

TEST(ImageLoad, ExifOrientation6RotatesClockwise) {
  const Image plain = load_image(kImages + "/plain.jpg");
  const Image rotated = load_image(kImages + "/orient6.jpg");
  ASSERT_EQ(plain.height(), 32);
  ASSERT_EQ(plain.width(), 48);
  ASSERT_EQ(rotated.height(), 48);
  ASSERT_EQ(rotated.width(), 32);
  for (int y = 0; y < rotated.height(); ++y)
    for (int x = 0; x < rotated.width(); ++x)
      ASSERT_TRUE(same_pixel(rotated, y, x, plain, plain.height() - 1 - x, y)) << y << "," << x;
  // The red marker at the stored top-left is at the top-right once upright; the blue one (top-right) at the
  // bottom-right.
  const uint8_t* red = rotated.row(1) + (rotated.width() - 2) * 3;
  EXPECT_GT(red[0], 200);
  EXPECT_LT(red[2], 80);
  const uint8_t* blue = rotated.row(rotated.height() - 2) + (rotated.width() - 2) * 3;
  EXPECT_GT(blue[2], 200);
  EXPECT_LT(blue[0], 80);

  ImageLimits raw;
  raw.apply_exif_orientation = false;
  const Image stored = load_image(kImages + "/orient6.jpg", raw);
  EXPECT_EQ(stored.height(), 32);
  EXPECT_EQ(stored.width(), 48);
}

TEST(ImageExif, AllEightOrientations) {
  const Image img = numbered();  // 3×4
  struct Expect { int o, h, w, y, x, sy, sx; };  // output (y, x) comes from source (sy, sx)
  const Expect cases[] = {
      {1, 3, 4, 0, 0, 0, 0}, {2, 3, 4, 0, 0, 0, 3}, {3, 3, 4, 0, 0, 2, 3}, {4, 3, 4, 0, 0, 2, 0},
      {5, 4, 3, 0, 2, 2, 0}, {6, 4, 3, 0, 0, 2, 0}, {7, 4, 3, 0, 0, 2, 3}, {8, 4, 3, 0, 0, 0, 3},
      {6, 4, 3, 3, 2, 0, 3}, {8, 4, 3, 3, 2, 2, 0}, {5, 4, 3, 3, 1, 1, 3}, {7, 4, 3, 3, 1, 1, 0},
  };
  for (const Expect& e : cases) {
    const Image out = apply_exif_orientation(img, e.o);
    ASSERT_EQ(out.height(), e.h) << e.o;
    ASSERT_EQ(out.width(), e.w) << e.o;
    EXPECT_TRUE(same_pixel(out, e.y, e.x, img, e.sy, e.sx)) << "orientation " << e.o << " at " << e.y << ","
                                                            << e.x;
  }
  // Inverses: 6 then 8, and the involutions 2, 3, 4, 5, 7.
  auto equal = [](const Image& a, const Image& b) {
    return a.height() == b.height() && a.width() == b.width() &&
           std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
  };
  EXPECT_TRUE(equal(apply_exif_orientation(apply_exif_orientation(img, 6), 8), img));
  for (int o : {2, 3, 4, 5, 7}) EXPECT_TRUE(equal(apply_exif_orientation(apply_exif_orientation(img, o), o), img)) << o;
  EXPECT_THROW(apply_exif_orientation(img, 9), Error);
  EXPECT_THROW(apply_exif_orientation(img, 0), Error);
}

// SOI + an APP1 Exif segment holding `tiff` + the rest of plain.jpg after its SOI.
std::vector<uint8_t> with_app1(const std::vector<uint8_t>& tiff) {
  const std::vector<uint8_t> plain = testing::read_file_bytes(kImages + "/plain.jpg");
  std::vector<uint8_t> out = {0xFF, 0xD8, 0xFF, 0xE1};
  const size_t len = tiff.size() + 8;
  out.push_back(static_cast<uint8_t>(len >> 8));
  out.push_back(static_cast<uint8_t>(len & 0xFF));
  const char exif[] = "Exif\0\0";
  out.insert(out.end(), exif, exif + 6);
  out.insert(out.end(), tiff.begin(), tiff.end());
  out.insert(out.end(), plain.begin() + 2, plain.end());
  return out;
}

// A little-endian TIFF with one IFD0 entry (tag, type, value).
std::vector<uint8_t> tiff_le(uint16_t tag, uint16_t type, uint16_t value, uint16_t entries = 1) {
  std::vector<uint8_t> t(22, 0);
  t[0] = 'I', t[1] = 'I', t[2] = 42, t[4] = 8;                      // header, IFD0 at offset 8
  t[8] = static_cast<uint8_t>(entries);                              // entry count
  t[10] = static_cast<uint8_t>(tag & 0xFF), t[11] = static_cast<uint8_t>(tag >> 8);
  t[12] = static_cast<uint8_t>(type), t[14] = 1;                     // type, count 1
  t[18] = static_cast<uint8_t>(value & 0xFF), t[19] = static_cast<uint8_t>(value >> 8);
  return t;
}

TEST(ImageExif, ParsesBothByteOrdersAndIgnoresBrokenTags) {
  for (int o = 1; o <= 8; ++o) {
    const std::vector<uint8_t> jpg = with_app1(tiff_le(0x0112, 3, static_cast<uint16_t>(o)));
    EXPECT_EQ(jpeg_exif_orientation(jpg.data(), jpg.size()), o);
    const Image img = load_image_from_memory(jpg.data(), jpg.size(), {}, "le.jpg");
    EXPECT_EQ(img.height(), o >= 5 ? 48 : 32) << o;
  }
  const std::vector<uint8_t> be = testing::read_file_bytes(kImages + "/orient6.jpg");  // big-endian "MM"
  EXPECT_EQ(jpeg_exif_orientation(be.data(), be.size()), 6);

  std::vector<uint8_t> bad = with_app1(tiff_le(0x0112, 3, 9));  // out of range
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  bad = with_app1(tiff_le(0x0112, 4, 6));  // wrong type (LONG)
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  bad = with_app1(tiff_le(0x0110, 3, 6));  // another tag
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  bad = with_app1(tiff_le(0x0110, 3, 6, 200));  // entries past the end of the segment before the tag
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  std::vector<uint8_t> t = tiff_le(0x0112, 3, 6);
  t[4] = 0xF0;  // IFD offset past the end
  bad = with_app1(t);
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  bad = with_app1(tiff_le(0x0112, 3, 6));
  bad[4] = 0xFF;  // segment length past the end of the file
  bad[5] = 0xFF;
  EXPECT_EQ(jpeg_exif_orientation(bad.data(), bad.size()), 1);
  for (size_t cut = 0; cut < 40; ++cut) {  // every truncation of the header region is handled
    const std::vector<uint8_t> good = with_app1(tiff_le(0x0112, 3, 6));
    (void)jpeg_exif_orientation(good.data(), cut);
  }
  EXPECT_EQ(jpeg_exif_orientation(nullptr, 0), 1);
}

TEST(ImageLoad, MissingFileIsNotFound) {
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kImages + "/no_such_file.jpg"); }, &msg), ErrorCode::NotFound);
  EXPECT_NE(msg.find("no_such_file.jpg"), std::string::npos) << msg;
}

TEST(ImageLoad, DirectoryIsIo) {
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kImages); }, &msg), ErrorCode::Io);
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
}

TEST(ImageLoad, BadContentIsInvalidArgument) {
  const std::string path = temp_path("not_an_image.jpg");
  write_bytes(path, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'});
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(path); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  write_bytes(path, {});
  EXPECT_EQ(code_of([&] { load_image(path); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
  std::remove(path.c_str());

  for (const char* name : {"/sample_small.png", "/plain.jpg"}) {
    std::vector<uint8_t> b = testing::read_file_bytes(kImages + name);
    b.resize(b.size() * 2 / 3);  // truncated
    EXPECT_EQ(code_of([&] { load_image_from_memory(b.data(), b.size(), {}, name); }, &msg),
              ErrorCode::InvalidArgument)
        << name;
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

TEST(ImageLoad, PixelLimitIsCheckedFromTheHeader) {
  // A PNG signature, an IHDR claiming 10000×10000 and an empty IDAT, and no pixel data at all: the limit must trip
  // before any decoding is attempted. (stb's header scan reads up to the first IDAT, for a possible tRNS.)
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                              0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10, 8, 2, 0, 0, 0, 0, 0, 0, 0,
                              0, 0, 0, 0, 'I', 'D', 'A', 'T', 0, 0, 0, 0};
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image_from_memory(png.data(), png.size(), {}, "huge.png"); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("10000x10000"), std::string::npos) << msg;
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
  ImageLimits small;
  small.max_pixels = 61 * 83 - 1;
  EXPECT_EQ(code_of([&] { load_image(kImages + "/sample_small.png", small); }, &msg), ErrorCode::InvalidArgument);
  small.max_pixels = 61 * 83;
  EXPECT_EQ(load_image(kImages + "/sample_small.png", small).height(), 61);
}

// An image whose pixels cannot be allocated is a typed OutOfMemory error with its size, not a std::bad_alloc.
// (Not under AddressSanitizer, whose allocator stops the process on a request this large.)
TEST(ImageAlloc, FailureIsOutOfMemoryWithTheSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on a 3 EB request instead of failing it";
#else
  std::string msg;
  EXPECT_EQ(code_of([&] { Image::uninitialized(1 << 30, 1 << 30); }, &msg), ErrorCode::OutOfMemory);
  EXPECT_NE(msg.find("1073741824x1073741824"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3458764513820540928 bytes"), std::string::npos) << msg;
#endif
}

TEST(ImageLoad, FaultInjection) {
  fault::configure("image.decode");
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kImages + "/plain.jpg"); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("injected fault"), std::string::npos) << msg;
  EXPECT_EQ(load_image(kImages + "/plain.jpg").width(), 48);  // only the first pass fails
  fault::configure("file.read");
  EXPECT_EQ(code_of([&] { load_image(kImages + "/plain.jpg"); }), ErrorCode::Io);
  fault::configure("");
}

}  // namespace
}  // namespace dacpp::io

namespace dacpp::io {
namespace {

const std::string kJpeg = kImages + "/jpeg";

// scripts/gen_jpeg_fixtures.py: each JPEG beside the PNG that libjpeg (through PIL, with the defaults cv2.imread
// uses) decodes it to. Odd sizes (83×61), so the chroma planes end in partial blocks.
TEST(JpegDecode, PixelsMatchLibjpegsDecode) {
  for (const char* name : {"s420", "s422_prog", "s444", "grey", "restart", "many_scans"}) {
    SCOPED_TRACE(name);
    const Image got = load_image(kJpeg + "/" + name + ".jpg");
    const Image want = load_image(kJpeg + "/" + name + ".png");
    ASSERT_EQ(got.height(), 61);
    ASSERT_EQ(got.width(), 83);
    ASSERT_EQ(want.height(), 61);
    ASSERT_EQ(want.width(), 83);
    int differing = 0;
    for (size_t i = 0; i < got.size_bytes(); ++i) differing += got.data()[i] != want.data()[i];
    EXPECT_EQ(differing, 0);
  }
  // The grey JPEG's pixels are replicated to the three channels.
  const Image grey = load_image(kJpeg + "/grey.jpg");
  for (int x = 0; x < grey.width(); ++x) {
    EXPECT_EQ(grey.row(30)[3 * x], grey.row(30)[3 * x + 1]);
    EXPECT_EQ(grey.row(30)[3 * x], grey.row(30)[3 * x + 2]);
  }
}

TEST(JpegDecode, CmykGoesThroughStb) {
  const Image cmyk = load_image(kJpeg + "/cmyk.jpg");
  const Image rgb = load_image(kJpeg + "/s444.png");
  ASSERT_EQ(cmyk.height(), rgb.height());
  ASSERT_EQ(cmyk.width(), rgb.width());
  double diff = 0;
  for (size_t i = 0; i < rgb.size_bytes(); ++i) diff += std::abs(int(cmyk.data()[i]) - int(rgb.data()[i]));
  EXPECT_LT(diff / static_cast<double>(rgb.size_bytes()), 4.0);  // two lossy encodings of one picture
}

TEST(JpegDecode, CorruptScanDataIsRefused) {
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kJpeg + "/corrupt_entropy.jpg"); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("corrupt JPEG data"), std::string::npos) << msg;
  EXPECT_NE(msg.find("corrupt_entropy.jpg"), std::string::npos) << msg;
}

TEST(JpegDecode, ScanLimit) {
  ImageLimits limits;
  limits.max_jpeg_scans = 66;  // the file has 66
  EXPECT_EQ(load_image(kJpeg + "/many_scans.jpg", limits).width(), 83);
  limits.max_jpeg_scans = 50;
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kJpeg + "/many_scans.jpg", limits); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("more than 50 scans"), std::string::npos) << msg;
}

TEST(JpegDecode, PixelLimitIsCheckedFromTheHeader) {
  ImageLimits limits;
  limits.max_pixels = 83 * 61 - 1;
  std::string msg;
  EXPECT_EQ(code_of([&] { load_image(kJpeg + "/s420.jpg", limits); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("83x61"), std::string::npos) << msg;
  // A header claiming 60000×60000 with no scan at all: refused before anything is allocated.
  std::vector<uint8_t> b = testing::read_file_bytes(kJpeg + "/s420.jpg");
  for (size_t i = 0; i + 8 < b.size(); ++i) {
    if (b[i] == 0xFF && b[i + 1] == 0xC0) {  // SOF0: length(2) precision(1) height(2) width(2)
      b[i + 5] = 0xEA, b[i + 6] = 0x60, b[i + 7] = 0xEA, b[i + 8] = 0x60;
      break;
    }
  }
  EXPECT_EQ(code_of([&] { load_image_from_memory(b.data(), b.size(), {}, "huge.jpg"); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("60000x60000"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dacpp::io
