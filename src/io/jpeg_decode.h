// JPEG decoding through libjpeg-turbo (the decoder OpenCV's cv2.imread and PIL use, which the official DA2/DA3
// loaders read photos with): the same integer IDCT and "fancy" chroma upsampling, so a photo's pixels are those the
// official code sees, and 2-3x faster than stb_image on large photos. Errors never leave as longjmp or abort: each
// libjpeg call runs behind a setjmp in a C-style frame, and a fatal error or a data-corruption warning becomes a
// result with the library's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dacpp::io::jpeg {

struct Decoder;  // libjpeg's decompressor and error manager

// A JPEG's header read; decode() writes its pixels. Not copyable; one thread at a time.
class Reader {
 public:
  // `max_scans`: the most scans (SOS markers) a file may hold before decode() gives up.
  explicit Reader(int max_scans = kDefaultMaxScans);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the header of `bytes` (kept by pointer: they must outlive the Reader). False with error() set when the
  // bytes are no JPEG libjpeg accepts.
  bool read_header(const uint8_t* bytes, size_t size);
  int width() const { return width_; }
  int height() const { return height_; }
  // True for colour spaces decoded here (grey, YCbCr, RGB); false for CMYK / YCCK, which the caller decodes another
  // way.
  bool rgb_output() const { return rgb_output_; }

  // Decodes height() rows of width()·3 bytes into `rgb` (rows `stride` bytes apart). False with error() set on a
  // fatal error, on corrupt entropy-coded data (the warnings after which libjpeg fills in grey), or past the scan
  // limit (a crafted progressive file of thousands of tiny scans can take minutes to decode).
  bool decode(uint8_t* rgb, size_t stride);

  const std::string& error() const { return error_; }

  // Real photos hold 1 (baseline) to ~20 (progressive) scans.
  static constexpr int kDefaultMaxScans = 256;

 private:
  std::unique_ptr<Decoder> d_;
  int width_ = 0;
  int height_ = 0;
  bool rgb_output_ = false;
  std::string error_;
};

}  // namespace dacpp::io::jpeg
