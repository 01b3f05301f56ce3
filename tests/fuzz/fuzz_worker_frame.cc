// libFuzzer target: the front/worker framing (server/worker_protocol.h read_frame). The input's first byte picks the
// message (even: WorkerRequest, as the worker reads; odd: WorkerReply, as the front reads); the rest is written into
// one end of an AF_UNIX socket pair, which is then closed, and frames are read from the other end until one is not
// Ok. A frame that parsed must write back and read back as the same message. bench/fuzz.sh runs it with
// -malloc_limit_mb=64: a length prefix alone must not make read_frame allocate what it claims.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "server/worker_protocol.h"
#include "worker.pb.h"

namespace {

constexpr size_t kMaxInput = 64 * 1024;  // below the socket buffer, so the write never blocks

template <typename Message>
void read_all(int fd) {
  for (int i = 0; i < 1024; ++i) {
    Message m;
    std::string error;
    const dacpp::server::FrameStatus st = dacpp::server::read_frame(fd, &m, &error);
    if (st != dacpp::server::FrameStatus::Ok) {
      if (st != dacpp::server::FrameStatus::Closed && error.empty()) __builtin_trap();
      return;
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return;
    Message back;
    std::string e2;
    const bool ok = dacpp::server::write_frame(pair[0], m, &e2) &&
                    dacpp::server::read_frame(pair[1], &back, &e2) == dacpp::server::FrameStatus::Ok;
    close(pair[0]);
    close(pair[1]);
    if (ok && back.SerializeAsString() != m.SerializeAsString()) __builtin_trap();
  }
}

}  // namespace

// protobuf logs every string field that is not UTF-8 when parsing; the parse failing is what matters here.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
  const int sndbuf = 4 * static_cast<int>(kMaxInput);
  setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  size_t off = 1;
  while (off < size) {
    const ssize_t w = write(fds[0], data + off, size - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  close(fds[0]);
  if (data[0] % 2 == 0)
    read_all<dacpp::worker::WorkerRequest>(fds[1]);
  else
    read_all<dacpp::worker::WorkerReply>(fds[1]);
  close(fds[1]);
  return 0;
}
