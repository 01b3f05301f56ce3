#include "server/worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace dacpp::server {
namespace {

constexpr size_t kFrameChunkBytes = size_t{1} << 20;

bool send_all(int fd, const char* p, size_t n, std::string* error) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *error = std::string("write to worker socket failed: ") + std::strerror(errno);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Returns the bytes read (< n only at end of stream), or -1 on error (errno kept).
ssize_t recv_all(int fd, char* p, size_t n, std::string* error) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int saved = errno;
      *error = std::string("read from worker socket failed: ") + std::strerror(saved);
      errno = saved;
      return -1;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

bool write_frame(int fd, const google::protobuf::MessageLite& message, std::string* error) {
  std::string body;
  if (!message.SerializeToString(&body)) {
    *error = "cannot serialize a worker frame";
    return false;
  }
  if (body.size() > kMaxFrameBytes) {
    *error = "worker frame of " + std::to_string(body.size()) + " bytes exceeds the " +
             std::to_string(kMaxFrameBytes) + "-byte limit";
    return false;
  }
  const uint32_t n = static_cast<uint32_t>(body.size());
  const char header[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                          static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  return send_all(fd, header, 4, error) && send_all(fd, body.data(), body.size(), error);
}

FrameStatus read_frame(int fd, google::protobuf::MessageLite* message, std::string* error) {
  unsigned char header[4];
  ssize_t r = recv_all(fd, reinterpret_cast<char*>(header), 4, error);
  if (r < 0) return errno == ECONNRESET ? FrameStatus::Reset : FrameStatus::Broken;
  if (r == 0) return FrameStatus::Closed;
  if (r < 4) {
    *error = "worker socket closed inside a frame header";
    return FrameStatus::Broken;
  }
  const uint32_t n = header[0] | (uint32_t{header[1]} << 8) | (uint32_t{header[2]} << 16) | (uint32_t{header[3]} << 24);
  if (n > kMaxFrameBytes) {
    *error = "worker frame length " + std::to_string(n) + " exceeds the " + std::to_string(kMaxFrameBytes) +
             "-byte limit";
    return FrameStatus::Broken;
  }
  // The body grows as bytes arrive (kFrameChunkBytes at a time): a bogus length prefix from a broken peer costs
  // what it actually sent, not the length it claims.
  std::string body;
  while (body.size() < n) {
    const size_t have = body.size(), want = std::min<size_t>(n - have, kFrameChunkBytes);
    body.resize(have + want);
    r = recv_all(fd, body.data() + have, want, error);
    if (r < 0) return FrameStatus::Broken;
    if (static_cast<size_t>(r) < want) {
      *error = "worker socket closed after " + std::to_string(have + static_cast<size_t>(r)) + " of " +
               std::to_string(n) + " frame bytes";
      return FrameStatus::Broken;
    }
  }
  if (!message->ParseFromString(body)) {
    *error = "worker frame of " + std::to_string(n) + " bytes does not parse";
    return FrameStatus::Broken;
  }
  return FrameStatus::Ok;
}

}  // namespace dacpp::server
