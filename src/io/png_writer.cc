// The PNG writers (8-bit RGB and grey, 16-bit grey), encoded in memory. libpng writes the file's structure
// (signature, IHDR, the IDAT and IEND chunks with their CRCs); the IDAT payload, one zlib stream of the filtered rows,
// is deflated here in horizontal strips on several threads, each strip a fresh raw deflate stream ending on a byte
// boundary (Z_SYNC_FLUSH; the last with Z_FINISH), so their concatenation is one valid deflate stream; the zlib
// header goes in front and the Adler-32 of all rows (combined from the strips') at the end. A 12 MP map is ~10 strips:
// the single deflate of a 4000×3000 16-bit map took ~0.5 s on one core (docs/PERFORMANCE.md, session 41). libpng
// reports errors by longjmp, so its calls run in a function holding only plain locals, and its error text becomes a
// dacpp::Error afterwards.
//
// zlib level 1 and every row "Up"-filtered (its difference from the row above), as OpenCV's default PNG level is 1:
// depth maps and their colour maps are smooth, so the files stay about as small, and a 4000×3000 map encodes
// several times faster than at libpng's default (level 6, each row's filter chosen from all five) or through
// stb_image_write (level 8): docs/PERFORMANCE.md, session 40. The pixels are the same either way (lossless).
#include <omp.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fault.h"
#include "io/writers.h"

namespace dacpp::io {
namespace {

struct PngSink {
  std::vector<uint8_t>* bytes;
  bool out_of_memory;
  char error[256];
};

void on_write(png_structp png, png_bytep data, png_size_t len) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  try {  // nothing may unwind through libpng's C frames
    sink->bytes->insert(sink->bytes->end(), data, data + len);
  } catch (...) {
    sink->out_of_memory = true;
  }
}

void on_flush(png_structp) {}

void on_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->error, sizeof(sink->error), "%s", msg != nullptr ? msg : "libpng error");
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

constexpr int kZlibLevel = 1;
constexpr size_t kStripBytes = size_t{1} << 20;  // filtered bytes per strip, at least (below: one strip)
constexpr int kMaxStrips = 16;

// One strip's deflated bytes and the Adler-32 of its filtered rows.
struct Strip {
  std::vector<uint8_t> out;
  uLong adler = 1;
  size_t raw = 0;  // filtered bytes fed
  bool ok = false;
};

// Rows [y0, y1) Up-filtered (filter byte 2, each byte minus the one above; row 0 against zeros) and deflated as raw
// deflate (no header) at kZlibLevel, ending with Z_FINISH when `last`, else Z_SYNC_FLUSH. False on a zlib or memory
// failure (nothing may throw out of an OpenMP region).
bool deflate_strip(const uint8_t* rows, size_t stride, int y0, int y1, bool last, Strip* strip) {
  if (fault::hit("png.deflate")) return false;  // as a failed deflateInit2 (tests)
  z_stream z{};
  if (deflateInit2(&z, kZlibLevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  bool ok = true;
  try {
    std::vector<uint8_t> line(stride + 1);
    strip->out.resize(deflateBound(&z, static_cast<uLong>((stride + 1) * static_cast<size_t>(y1 - y0))) + 64);
    z.next_out = strip->out.data();
    z.avail_out = static_cast<uInt>(strip->out.size());
    for (int y = y0; y < y1 && ok; ++y) {
      const uint8_t* cur = rows + stride * static_cast<size_t>(y);
      const uint8_t* up = y > 0 ? cur - stride : nullptr;
      line[0] = 2;  // Up
      for (size_t i = 0; i < stride; ++i) line[i + 1] = static_cast<uint8_t>(cur[i] - (up ? up[i] : 0));
      strip->adler = adler32(strip->adler, line.data(), static_cast<uInt>(line.size()));
      strip->raw += line.size();
      z.next_in = line.data();
      z.avail_in = static_cast<uInt>(line.size());
      const int flush = y + 1 < y1 ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH;
      const int rc = deflate(&z, flush);
      // deflateBound leaves room for everything, so the input is always taken whole.
      ok = z.avail_in == 0 && (flush == Z_FINISH ? rc == Z_STREAM_END : rc == Z_OK);
    }
    strip->out.resize(z.total_out);
  } catch (...) {
    ok = false;
  }
  deflateEnd(&z);
  strip->ok = ok;
  return ok;
}

// The IDAT payload of `height` rows: the zlib stream, as pieces to be written in order (each strip's bytes, the
// header before the first, the Adler-32 after the last). False, with *out_of_memory set, when a strip failed.
bool deflate_rows(const uint8_t* rows, size_t stride, int height, std::vector<Strip>* strips, uint8_t header[2],
                  uint8_t trailer[4], bool* out_of_memory) {
  const size_t total = (stride + 1) * static_cast<size_t>(height);
  const int n = static_cast<int>(std::clamp<size_t>(total / kStripBytes, 1,
                                                   std::min<size_t>({static_cast<size_t>(kMaxStrips),
                                                                     static_cast<size_t>(height),
                                                                     static_cast<size_t>(omp_get_num_procs())})));
  strips->resize(static_cast<size_t>(n));
  int failed = 0;
#pragma omp parallel for num_threads(n) schedule(static, 1) reduction(+ : failed) if (n > 1)
  for (int i = 0; i < n; ++i) {
    const int y0 = static_cast<int>(static_cast<int64_t>(height) * i / n);
    const int y1 = static_cast<int>(static_cast<int64_t>(height) * (i + 1) / n);
    failed += deflate_strip(rows, stride, y0, y1, i + 1 == n, &(*strips)[static_cast<size_t>(i)]) ? 0 : 1;
  }
  if (failed != 0) {
    *out_of_memory = true;  // deflate fails only for memory with these fixed, valid parameters
    return false;
  }
  uLong adler = (*strips)[0].adler;
  for (int i = 1; i < n; ++i) {
    const Strip& st = (*strips)[static_cast<size_t>(i)];
    adler = adler32_combine(adler, st.adler, static_cast<z_off_t>(st.raw));
  }
  header[0] = 0x78;  // deflate, 32 KB window
  header[1] = 0x01;  // level 1 ("fastest" FLEVEL 0); 0x7801 is a multiple of 31
  for (int b = 0; b < 4; ++b) trailer[b] = static_cast<uint8_t>(adler >> (24 - 8 * b));
  return true;
}

// The PNG around `strips`: signature and IHDR, the IDAT chunks (at most kMaxChunk bytes each), IEND. color_type is
// PNG_COLOR_TYPE_GRAY or PNG_COLOR_TYPE_RGB. Returns false with sink->error set on failure. No C++ object with a
// destructor lives in this frame, so libpng's longjmp skips nothing.
constexpr size_t kMaxChunk = size_t{1} << 30;
bool encode(PngSink* sink, const Strip* strips, int n_strips, const uint8_t* header, const uint8_t* trailer,
            int height, int width, int bit_depth, int color_type) {
  static const png_byte kIdat[5] = {'I', 'D', 'A', 'T', '\0'};
  static const png_byte kIend[5] = {'I', 'E', 'N', 'D', '\0'};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, &on_error, &on_warning);
  if (png == nullptr) {
    std::snprintf(sink->error, sizeof(sink->error), "png_create_write_struct failed");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(sink->error, sizeof(sink->error), "png_create_info_struct failed");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, &on_write, &on_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth, color_type,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_chunk(png, kIdat, header, 2);
  for (int i = 0; i < n_strips; ++i) {
    const uint8_t* p = strips[i].out.data();
    for (size_t left = strips[i].out.size(); left > 0;) {
      const size_t len = std::min(left, kMaxChunk);
      png_write_chunk(png, kIdat, p, len);
      p += len;
      left -= len;
    }
  }
  png_write_chunk(png, kIdat, trailer, 4);
  png_write_chunk(png, kIend, nullptr, 0);
  png_destroy_write_struct(&png, &info);
  return true;
}

void write_png(const std::string& path, const uint8_t* rows, size_t stride, int height, int width,
               int bit_depth, int color_type) {
  std::vector<Strip> strips;
  uint8_t header[2], trailer[4];
  bool out_of_memory = false;
  const bool deflated = deflate_rows(rows, stride, height, &strips, header, trailer, &out_of_memory);
  DACPP_CHECK(deflated && !out_of_memory, ErrorCode::OutOfMemory, "cannot write '", path,
              "': out of memory compressing PNG rows");
  size_t size = 64;
  for (const Strip& st : strips) size += st.out.size() + 12;
  std::vector<uint8_t> bytes;
  bytes.reserve(size);
  PngSink sink{&bytes, false, {0}};
  const bool ok = encode(&sink, strips.data(), static_cast<int>(strips.size()), header, trailer, height, width,
                         bit_depth, color_type);
  DACPP_CHECK(!sink.out_of_memory, ErrorCode::OutOfMemory, "cannot write '", path, "': out of memory encoding PNG");
  DACPP_CHECK(ok, ErrorCode::Io, "cannot write '", path, "': PNG encoding failed: ", sink.error);
  write_file_atomic(path, bytes.data(), bytes.size());
}

constexpr int kMaxSide = 1 << 24;  // libpng's bound on a side

}  // namespace

void write_png8(const std::string& path, const Image& image) {
  check_plane("write_png8", path, image.data(), image.height(), image.width(), kMaxSide);
  write_png(path, image.data(), static_cast<size_t>(image.width()) * Image::kChannels, image.height(),
            image.width(), 8, PNG_COLOR_TYPE_RGB);
}

void write_png8_gray(const std::string& path, const uint8_t* values, int height, int width) {
  check_plane("write_png8_gray", path, values, height, width, kMaxSide);
  write_png(path, values, static_cast<size_t>(width), height, width, 8, PNG_COLOR_TYPE_GRAY);
}

void write_png16(const std::string& path, const uint16_t* values, int height, int width) {
  check_plane("write_png16", path, values, height, width, kMaxSide);
  const size_t n = static_cast<size_t>(height) * width;
  std::vector<uint8_t> be(n * 2);
  for (size_t i = 0; i < n; ++i) {
    be[2 * i] = static_cast<uint8_t>(values[i] >> 8);
    be[2 * i + 1] = static_cast<uint8_t>(values[i] & 0xFF);
  }
  write_png(path, be.data(), static_cast<size_t>(width) * 2, height, width, 16, PNG_COLOR_TYPE_GRAY);
}

}  // namespace dacpp::io
