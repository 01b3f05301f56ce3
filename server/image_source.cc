#include "server/image_source.h"

#include <sys/stat.h>

#include "core/error.h"

namespace dacpp::server {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return path.size() < 4096 && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<uint8_t> decode_base64(const std::string& text) {
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = base64_value(c);
    DACPP_CHECK(v >= 0 && !padding, ErrorCode::InvalidArgument, "base64: invalid character ",
                (c >= 32 && c < 127) ? std::string("'") + c + "'" : "0x" + std::to_string(static_cast<unsigned char>(c)),
                " at offset ", i);
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  DACPP_CHECK(bits < 6, ErrorCode::InvalidArgument, "base64: truncated input (", text.size(), " characters)");
  return out;
}

std::string encode_base64(const uint8_t* bytes, size_t size) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t v = uint32_t{bytes[i]} << 16;
    if (i + 1 < size) v |= uint32_t{bytes[i + 1]} << 8;
    if (i + 2 < size) v |= bytes[i + 2];
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[v & 63] : '=');
  }
  return out;
}

std::vector<uint8_t> decode_image_payload(const std::string& src, const std::string& field) {
  DACPP_CHECK(!src.empty(), ErrorCode::InvalidArgument, field, " is empty: expected an image path or base64 data");
  std::string payload = src;
  if (payload.rfind("data:", 0) == 0) {
    const size_t comma = payload.find(',');
    DACPP_CHECK(comma != std::string::npos && payload.substr(0, comma).find(";base64") != std::string::npos,
                ErrorCode::InvalidArgument, field, " is a data: URI without ';base64,'");
    payload.erase(0, comma + 1);
  }
  std::vector<uint8_t> bytes;
  try {
    bytes = decode_base64(payload);
  } catch (const Error& e) {
    const bool looks_like_path = src.size() < 4096 && src.find('/') != std::string::npos;
    DACPP_THROW(looks_like_path ? ErrorCode::NotFound : ErrorCode::InvalidArgument, field, " (",
                src.size(), " bytes) is neither an existing file nor base64 image data (", e.message(), ")");
  }
  DACPP_CHECK(!bytes.empty(), ErrorCode::InvalidArgument, field, " holds no image bytes");
  return bytes;
}

io::Image load_request_image(const std::string& src, const std::string& field) {
  DACPP_CHECK(!src.empty(), ErrorCode::InvalidArgument, field, " is empty: expected an image path or base64 data");
  if (is_regular_file(src)) return io::load_image(src);
  const std::vector<uint8_t> bytes = decode_image_payload(src, field);
  return io::load_image_from_memory(bytes.data(), bytes.size(), {}, field);
}

}  // namespace dacpp::server
