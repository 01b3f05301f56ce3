// PFM and NPY writers (see writers.h). The PNG writers are in png_writer.cc.
#include "io/writers.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"

namespace dacpp::io {
namespace {

bool host_is_little_endian() {
  const uint16_t one = 1;
  uint8_t first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// Appends `count` floats as little-endian float32.
void append_f32_le(std::vector<uint8_t>* out, const float* v, size_t count) {
  if (count == 0) return;
  const size_t at = out->size();
  out->resize(at + count * 4);
  uint8_t* dst = out->data() + at;
  std::memcpy(dst, v, count * 4);
  if (!host_is_little_endian()) {
    for (size_t i = 0; i < count; ++i) {
      uint8_t* p = dst + i * 4;
      std::swap(p[0], p[3]);
      std::swap(p[1], p[2]);
    }
  }
}

}  // namespace

void check_plane(const char* what, const std::string& path, const void* values, int height, int width,
                 int max_side) {
  DACPP_CHECK(values != nullptr, ErrorCode::InvalidArgument, what, " '", path, "': no data");
  DACPP_CHECK(height > 0 && width > 0 && height <= max_side && width <= max_side, ErrorCode::InvalidArgument, what,
              " '", path, "': bad size ", height, "x", width);
}

void write_pfm(const std::string& path, const float* values, int height, int width) {
  check_plane("write_pfm", path, values, height, width);
  const std::string header = "Pf\n" + std::to_string(width) + " " + std::to_string(height) + "\n-1.0\n";
  std::vector<uint8_t> bytes(header.begin(), header.end());
  bytes.reserve(header.size() + static_cast<size_t>(height) * width * 4);
  for (int y = height - 1; y >= 0; --y) append_f32_le(&bytes, values + static_cast<size_t>(y) * width, width);
  write_file_atomic(path, bytes.data(), bytes.size());
}

std::vector<uint16_t> quantize_u16(const float* values, size_t count, float lo, float hi) {
  DACPP_CHECK(values != nullptr || count == 0, ErrorCode::InvalidArgument, "quantize_u16: no data");
  DACPP_CHECK(std::isfinite(lo) && std::isfinite(hi) && hi > lo, ErrorCode::InvalidArgument,
              "quantize_u16: range [", lo, ", ", hi, "] is empty or not finite");
  std::vector<uint16_t> out(count);
  const double scale = 65535.0 / (static_cast<double>(hi) - lo);
  for (size_t i = 0; i < count; ++i) {
    const double t = (static_cast<double>(values[i]) - lo) * scale;
    out[i] = std::isnan(t) ? 0 : static_cast<uint16_t>(t <= 0 ? 0 : (t >= 65535 ? 65535 : std::lround(t)));
  }
  return out;
}

std::vector<uint8_t> npy_bytes(const float* values, const std::vector<int64_t>& shape) {
  int64_t count = 1;
  std::string dims;  // Python tuple spelling: "()", "(5,)", "(2, 3)"
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    DACPP_CHECK(d >= 0 && (d == 0 || count <= INT64_MAX / d), ErrorCode::InvalidArgument, "npy: bad dimension ",
                d, " in a shape of rank ", shape.size());
    count *= d;
    dims += (i > 0 ? ", " : "") + std::to_string(d);
  }
  if (shape.size() == 1) dims += ",";
  DACPP_CHECK(values != nullptr || count == 0, ErrorCode::InvalidArgument, "npy: no data");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded with spaces to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  bytes.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  bytes.insert(bytes.end(), header.begin(), header.end());
  append_f32_le(&bytes, values, static_cast<size_t>(count));
  return bytes;
}

void write_npy(const std::string& path, const float* values, const std::vector<int64_t>& shape) {
  const std::vector<uint8_t> bytes = npy_bytes(values, shape);
  write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace dacpp::io
