// Framing between the front process and the worker (proto/worker.proto): each message is a 4-byte little-endian
// length followed by that many bytes of serialized protobuf, over a connected AF_UNIX stream socket.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <string>

namespace dacpp::server {

// Largest frame either side accepts; a longer length prefix means a broken peer.
constexpr uint32_t kMaxFrameBytes = 1u << 30;

// Reset: the peer closed the connection with our bytes still unread (ECONNRESET before a reply began), so it never
// took the request we sent.
enum class FrameStatus { Ok, Closed, Reset, Broken };

// Writes one frame. Returns false when the peer is gone (EPIPE/ECONNRESET) or the write failed; `error` says why.
// Never raises SIGPIPE (MSG_NOSIGNAL).
bool write_frame(int fd, const google::protobuf::MessageLite& message, std::string* error);

// Reads one frame into `message`. Closed: the peer closed cleanly before a frame began. Broken: a read error, a
// truncated frame, a length over kMaxFrameBytes or bytes that do not parse; `error` says which.
FrameStatus read_frame(int fd, google::protobuf::MessageLite* message, std::string* error);

}  // namespace dacpp::server
