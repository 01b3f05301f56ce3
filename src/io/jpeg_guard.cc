#include "io/jpeg_guard.h"

#include "core/error.h"

namespace dacpp::io {
namespace {

constexpr uint8_t kDht = 0xC4, kSos = 0xDA, kEoi = 0xD9;

// Checks the tables of one DHT segment whose payload (after the 2 length bytes) starts at p; `len` is the
// declared segment length. Reads past the end of the data count as 0, as stb's reader does.
void check_dht(const uint8_t* bytes, size_t size, size_t p, size_t len, const std::string& name) {
  auto at = [&](size_t i) -> unsigned { return i < size ? bytes[i] : 0u; };
  long left = static_cast<long>(len) - 2;
  while (left > 0) {
    const unsigned q = at(p);
    if ((q >> 4) > 1 || (q & 15) > 3) return;  // stb rejects this table itself
    unsigned n = 0;
    for (size_t i = 0; i < 16; ++i) n += at(p + 1 + i);
    DACPP_CHECK(n <= 256, ErrorCode::InvalidArgument, "cannot decode image '", name,
                "': corrupt JPEG: a Huffman table (DHT at byte ", p - 4, ") declares ", n,
                " codes, more than 256");
    p += 17 + n;
    left -= 17 + static_cast<long>(n);
  }
}

}  // namespace

void check_jpeg_huffman_tables(const uint8_t* bytes, size_t size, const std::string& name) {
  // stb takes any run of 0xFF followed by 0xD8 at the start as SOI, so "FF FF D8" is a JPEG to it too.
  size_t pos = 0;
  while (pos < size && bytes[pos] == 0xFF) ++pos;
  if (pos == 0 || pos >= size || bytes[pos] != 0xD8) return;
  ++pos;  // after SOI
  bool entropy = false;
  while (pos + 1 < size) {
    if (bytes[pos] != 0xFF) {  // stb skips junk (and entropy-coded data) byte by byte looking for a marker
      ++pos;
      continue;
    }
    const uint8_t m = bytes[pos + 1];
    if (m == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (entropy && (m == 0x00 || (m >= 0xD0 && m <= 0xD7))) {  // stuffed byte or restart marker inside a scan
      pos += 2;
      continue;
    }
    if (m == kEoi) return;
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD8)) {  // no length field
      pos += 2;
      continue;
    }
    if (pos + 3 >= size) return;
    const size_t len = (static_cast<size_t>(bytes[pos + 2]) << 8) | bytes[pos + 3];
    if (m == kDht) check_dht(bytes, size, pos + 4, len, name);
    entropy = m == kSos;
    pos += 2 + (len >= 2 ? len : 2);
  }
}

}  // namespace dacpp::io
