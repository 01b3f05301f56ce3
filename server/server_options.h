// Command line of dacpp-server. LocalAI passes exactly `--addr <host:port>` (spec §2.2); both `--flag value` and
// `--flag=value` are accepted, and unknown arguments are ignored with a warning so a newer launcher cannot stop
// the backend from starting.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dacpp::server {

struct ServerOptions {
  std::string addr = "127.0.0.1:50051";  // gRPC listen address
  std::string http_addr;                 // REST + web viewer; empty = off
  std::string model;                     // a model to load at start (in the background; Health answers at once)
  std::vector<std::string> options;      // --option KEY:VALUE: that load's options, as LoadModel's Options
  uint64_t max_response_bytes = 0;       // 0 = kDefaultMaxResponseBytes
  bool help = false;
  // Hidden worker mode (spawned by the Supervisor).
  bool worker = false;
  int worker_fd = -1;
  pid_t parent_pid = 0;
};

// Throws Error{InvalidArgument} naming a flag whose value is missing or malformed.
ServerOptions parse_server_options(int argc, char** argv);
const char* server_usage();

// "host:port" → host and port; "[::1]:50051" keeps the brackets off the host. Throws InvalidArgument.
void split_host_port(const std::string& addr, std::string* host, int* port);

}  // namespace dacpp::server
