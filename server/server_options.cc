#include "server/server_options.h"

#include <cstdio>

#include "core/error.h"

namespace dacpp::server {
namespace {

long long parse_number(const std::string& flag, const std::string& value, long long lo, long long hi) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DACPP_CHECK(!value.empty() && used == value.size() && v >= lo && v <= hi, ErrorCode::InvalidArgument, flag, " '",
              value, "' must be an integer in ", lo, "..", hi);
  return v;
}

}  // namespace

const char* server_usage() {
  return "usage: dacpp-server [--addr HOST:PORT] [--http-addr HOST:PORT] [--model PATH [--option KEY:VALUE]...]\n"
         "                    [--max-response-bytes N]\n"
         "  --addr                gRPC address for LocalAI's backend protocol (default 127.0.0.1:50051)\n"
         "  --http-addr           REST (POST /v1/depth, /healthz, /metrics) and the web viewer at /\n"
         "  --model               load this model at start-up (LoadModel may replace it)\n"
         "  --option              an option of that load, as LoadModel's Options: device:cuda, precision:f16, ...\n"
         "  --max-response-bytes  largest Depth response (default 50000000, LocalAI's client limit)\n"
         "environment: LOCALAI_GRPC_AUTH_TOKEN (require 'authorization: Bearer <token>'), DACPP_LOG\n";
}

ServerOptions parse_server_options(int argc, char** argv) {
  ServerOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    const bool inline_value = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = arg.substr(eq + 1), arg = arg.substr(0, eq);
    auto take = [&](const char* flag) {
      if (inline_value) return value;
      DACPP_CHECK(i + 1 < argc, ErrorCode::InvalidArgument, flag, " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--addr") o.addr = take("--addr");
    else if (arg == "--http-addr") o.http_addr = take("--http-addr");
    else if (arg == "--model") o.model = take("--model");
    else if (arg == "--option") o.options.push_back(take("--option"));
    else if (arg == "--max-response-bytes")
      o.max_response_bytes = static_cast<uint64_t>(parse_number(arg, take("--max-response-bytes"), 1, 1ll << 40));
    else if (arg == "--worker") o.worker = true;
    else if (arg == "--worker-fd") o.worker_fd = static_cast<int>(parse_number(arg, take("--worker-fd"), 0, 1 << 20));
    else if (arg == "--parent-pid") o.parent_pid = static_cast<pid_t>(parse_number(arg, take("--parent-pid"), 1, 1 << 30));
    else if (arg == "--help" || arg == "-h") o.help = true;
    else std::fprintf(stderr, "dacpp: warn: ignoring unknown argument '%s'\n", argv[i]);
  }
  DACPP_CHECK(!o.addr.empty(), ErrorCode::InvalidArgument, "--addr is empty");
  DACPP_CHECK(o.options.empty() || !o.model.empty(), ErrorCode::InvalidArgument,
              "--option applies to the start-up load: give --model too");
  DACPP_CHECK(!o.worker || o.worker_fd >= 0, ErrorCode::InvalidArgument, "--worker needs --worker-fd");
  return o;
}

void split_host_port(const std::string& addr, std::string* host, int* port) {
  const size_t colon = addr.rfind(':');
  DACPP_CHECK(colon != std::string::npos && colon + 1 < addr.size(), ErrorCode::InvalidArgument, "address '", addr,
              "' must be HOST:PORT");
  *host = addr.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  if (host->empty()) *host = "0.0.0.0";
  *port = static_cast<int>(parse_number("port of '" + addr + "'", addr.substr(colon + 1), 0, 65535));
}

}  // namespace dacpp::server
