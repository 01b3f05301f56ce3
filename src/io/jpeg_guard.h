// Pre-decode checks for JPEG input that stb_image 2.27 (the version Debian ships) does not make itself.
// stbi__build_huffman writes one entry per declared Huffman code into a 257-entry table without checking the
// total, so a DHT segment declaring more than 256 codes overflows the decoder's heap object (found by
// tests/fuzz/fuzz_image under UBSan). The check mirrors how stb finds markers — including the ones it finds by
// skipping junk bytes and the ones between progressive scans — so no table stb will build escapes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dacpp::io {

// Throws InvalidArgument naming `name` when any DHT segment of the JPEG declares more than 256 codes in a table.
// Bytes that stb would not take for a JPEG (no 0xFF... 0xD8 start) are left alone.
void check_jpeg_huffman_tables(const uint8_t* bytes, size_t size, const std::string& name);

}  // namespace dacpp::io
