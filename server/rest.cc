#include "server/rest.h"

#include <httplib.h>

#include <chrono>

#include "server/grpc_service.h"
#include "server/rest_json.h"
#include "server/web_page.h"

namespace dacpp::server {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void reply_error(httplib::Response& res, const ServerError& e) {
  res.status = e.http_status;
  res.set_content(error_to_json(e.http_status, e.message), "application/json");
}

}  // namespace

RestServer::RestServer(BackendCore* core, std::string auth_token)
    : core_(core), auth_token_(std::move(auth_token)), http_(std::make_unique<httplib::Server>()) {
  install_routes();
}

RestServer::~RestServer() { stop(); }

void RestServer::install_routes() {
  // httplib's default sets SO_REUSEPORT, which lets a port already taken (by another server, or our gRPC listener)
  // be bound again and share its connections; SO_REUSEADDR alone still allows a quick restart.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http_->set_payload_max_length(64ull << 20);
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", "application/json");
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(core_->metrics().render(core_->supervisor().worker_pid(), core_->supervisor().model_loaded()),
                    "text/plain; version=0.0.4");
  });
  http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(web_page_html(), "text/html; charset=utf-8");
  });
  http_->Post("/v1/depth", [this](const httplib::Request& req, httplib::Response& res) {
    const double t0 = now_s();
    std::optional<ServerError> error;
    if (!auth_token_.empty() && !constant_time_equal(req.get_header_value("Authorization"), "Bearer " + auth_token_))
      error = error_from_condition(ServerCondition::Unauthenticated, "missing or invalid Authorization: Bearer token");
    backend::DepthResponse out;
    if (!error) {
      try {
        error = core_->depth(depth_request_from_json(req.body), &out);
      } catch (const Error& e) {
        error = error_from_engine(e.code(), e.message());
      }
    }
    if (error)
      reply_error(res, *error);
    else
      res.set_content(depth_response_to_json(out), "application/json");
    core_->metrics().record("rest", "Depth", error ? grpc_code_name(error->code) : "OK", now_s() - t0);
  });
}

void RestServer::start(const std::string& host, int port) {
  if (port == 0) {
    port_ = http_->bind_to_any_port(host);
    DACPP_CHECK(port_ > 0, ErrorCode::Io, "REST: cannot bind ", host, ":<any port>");
  } else {
    DACPP_CHECK(http_->bind_to_port(host, port), ErrorCode::Io, "REST: cannot bind ", host, ":", port);
    port_ = port;
  }
  thread_ = std::thread([this] { http_->listen_after_bind(); });
}

void RestServer::stop() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dacpp::server
