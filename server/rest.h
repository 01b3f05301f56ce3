// RestServer: the HTTP surface (cpp-httplib) — POST /v1/depth with LocalAI's JSON schema (spec §3.5), GET /healthz,
// GET /metrics (Prometheus text) and the web viewer at GET /. Runs on its own threads; shares BackendCore with gRPC.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "server/backend_core.h"
#include "server/rest_json.h"

namespace httplib {
class Server;
}

namespace dacpp::server {

class RestServer {
 public:
  // `auth_token`, when non-empty, is required as "Authorization: Bearer <token>" on POST /v1/depth.
  RestServer(BackendCore* core, std::string auth_token);
  ~RestServer();

  // Binds host:port (port 0 = any free port) and starts serving. Throws Error{Io} when the bind fails.
  void start(const std::string& host, int port);
  int port() const { return port_; }
  void stop();

 private:
  void install_routes();

  BackendCore* core_;
  std::string auth_token_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace dacpp::server
