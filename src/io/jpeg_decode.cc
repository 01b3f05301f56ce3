#include "io/jpeg_decode.h"

#include <csetjmp>
#include <cstdio>  // jpeglib.h uses FILE and size_t without including their headers

#include <jpeglib.h>
// After jpeglib.h: its message list depends on the library's configuration (JPEG_LIB_VERSION, arithmetic coding).
#include <jerror.h>

namespace dacpp::io::jpeg {

// Everything libjpeg touches, in one place: the decompressor points back here through client_data.
struct Decoder {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr err{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64] = {};
  int max_scans = Reader::kDefaultMaxScans;
  bool created = false;
};

namespace {

Decoder* owner(j_common_ptr c) { return static_cast<Decoder*>(c->client_data); }

[[noreturn]] void fail(Decoder* d) { std::longjmp(d->jump, 1); }

// A fatal error: libjpeg's message, then back to the setjmp of the call in progress.
[[noreturn]] void on_error(j_common_ptr c) {
  c->err->format_message(c, owner(c)->message);
  fail(owner(c));
}

// The warnings after which part of the image is grey fill or garbage rather than the file's pixels.
bool loses_data(int code) {
  switch (code) {
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
#if JPEG_LIB_VERSION >= 70 || defined(C_ARITH_CODING_SUPPORTED) || defined(D_ARITH_CODING_SUPPORTED)
    case JWRN_ARITH_BAD_CODE:  // in jerror.h's list only where the library decodes arithmetic coding
#endif
    case JWRN_JPEG_EOF:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
      return true;
    default:
      return false;
  }
}

// level < 0: a warning; others are trace messages. Harmless warnings (extraneous bytes before a marker, an unknown
// JFIF revision) are decoded through, as cv2.imread and stb_image do; corrupt data stops the decode.
void on_message(j_common_ptr c, int level) {
  if (level >= 0) return;
  c->err->num_warnings++;
  if (!loses_data(c->err->msg_code)) return;
  char text[JMSG_LENGTH_MAX];
  c->err->format_message(c, text);
  std::snprintf(owner(c)->message, sizeof(owner(c)->message), "corrupt JPEG data (%s)", text);
  fail(owner(c));
}

void no_output(j_common_ptr) {}

void on_progress(j_common_ptr c) {
  const auto* dc = reinterpret_cast<j_decompress_ptr>(c);
  Decoder* d = owner(c);
  if (dc->input_scan_number <= d->max_scans) return;
  std::snprintf(d->message, sizeof(d->message), "more than %d scans, the limit for one image", d->max_scans);
  fail(d);
}

// The setjmp of each call lives in these C-style functions, whose frames hold no object with a destructor: a
// longjmp back into them skips nothing.
bool start(Decoder* d, const uint8_t* bytes, size_t size) {
  if (setjmp(d->jump)) return false;
  d->cinfo.err = jpeg_std_error(&d->err);
  d->err.error_exit = on_error;
  d->err.emit_message = on_message;
  d->err.output_message = no_output;
  d->cinfo.client_data = d;
  jpeg_create_decompress(&d->cinfo);  // keeps err and client_data
  d->created = true;
  d->progress.progress_monitor = on_progress;
  d->cinfo.progress = &d->progress;
  jpeg_mem_src(&d->cinfo, bytes, static_cast<unsigned long>(size));
  if (jpeg_read_header(&d->cinfo, TRUE) != JPEG_HEADER_OK) {
    std::snprintf(d->message, sizeof(d->message), "a JPEG of tables only, with no image");
    return false;
  }
  return true;
}

bool decode_rows(Decoder* d, JDIMENSION width, JDIMENSION height, uint8_t* rgb, size_t stride) {
  if (setjmp(d->jump)) return false;
  j_decompress_ptr c = &d->cinfo;
  // libjpeg's defaults, spelled out: they are what cv2.imread decodes with.
  c->out_color_space = JCS_RGB;
  c->dct_method = JDCT_ISLOW;
  c->do_fancy_upsampling = TRUE;
  c->scale_num = c->scale_denom = 1;
  jpeg_start_decompress(c);
  if (c->output_components != 3 || c->output_width != width || c->output_height != height) {
    std::snprintf(d->message, sizeof(d->message), "the decoder would produce %ux%u with %d channels, not %ux%u RGB",
                  c->output_width, c->output_height, c->output_components, width, height);
    return false;
  }
  while (c->output_scanline < c->output_height) {
    JSAMPROW rows[8];
    const JDIMENSION first = c->output_scanline;
    JDIMENSION n = 0;
    for (; n < 8 && first + n < c->output_height; ++n) rows[n] = rgb + static_cast<size_t>(first + n) * stride;
    if (jpeg_read_scanlines(c, rows, n) == 0) {
      std::snprintf(d->message, sizeof(d->message), "the decoder stopped at row %u of %u", first, c->output_height);
      return false;
    }
  }
  jpeg_finish_decompress(c);
  return true;
}

}  // namespace

Reader::Reader(int max_scans) : d_(std::make_unique<Decoder>()) { d_->max_scans = max_scans; }

Reader::~Reader() {
  if (d_->created) jpeg_destroy_decompress(&d_->cinfo);
}

bool Reader::read_header(const uint8_t* bytes, size_t size) {
  if (d_->created) {
    error_ = "read_header called twice";
    return false;
  }
  if (!start(d_.get(), bytes, size)) {
    error_ = d_->message;
    return false;
  }
  width_ = static_cast<int>(d_->cinfo.image_width);
  height_ = static_cast<int>(d_->cinfo.image_height);
  const J_COLOR_SPACE cs = d_->cinfo.jpeg_color_space;
  rgb_output_ = cs == JCS_GRAYSCALE || cs == JCS_YCbCr || cs == JCS_RGB;
  return true;
}

bool Reader::decode(uint8_t* rgb, size_t stride) {
  if (!d_->created || !rgb_output_ || width_ <= 0 || height_ <= 0) {
    error_ = "decode without a readable RGB header";
    return false;
  }
  if (!decode_rows(d_.get(), static_cast<JDIMENSION>(width_), static_cast<JDIMENSION>(height_), rgb, stride)) {
    error_ = d_->message;
    return false;
  }
  return true;
}

}  // namespace dacpp::io::jpeg
