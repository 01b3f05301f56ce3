// Request images: DepthRequest.src and friends are a file path, bare base64, or a data: URI (LocalAI's /v1/depth
// always sends base64 with the data: prefix removed; spec/localai-backend.md §3.3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/image.h"

namespace dacpp::server {

// Standard base64 (RFC 4648, '+' '/'; also the URL-safe '-' '_'), padding optional, ASCII whitespace ignored.
// Throws InvalidArgument naming the offset of the first bad character.
std::vector<uint8_t> decode_base64(const std::string& text);
std::string encode_base64(const uint8_t* bytes, size_t size);

// The non-path half of load_request_image: `src` (after an optional "data:<mime>;base64," prefix) as base64 →
// the encoded image bytes. Never touches the file system. Errors: InvalidArgument (empty src, a data: URI without
// ";base64,", bad base64, no bytes); NotFound when bad base64 looks like a path ('/' in it).
std::vector<uint8_t> decode_image_payload(const std::string& src, const std::string& field);

// Decodes `src`: an existing file is read as an image file; otherwise the text (after an optional
// "data:<mime>;base64," prefix) must be base64 of an encoded image. Errors: InvalidArgument (empty src, neither a
// file nor base64, an undecodable image), the image decoder's own errors.
io::Image load_request_image(const std::string& src, const std::string& field);

}  // namespace dacpp::server
