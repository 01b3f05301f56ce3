#include "server/grpc_service.h"

#include <chrono>

namespace dacpp::server {
namespace {

struct InFlight {
  explicit InFlight(std::atomic<int>& n) : n_(n) { ++n_; }
  ~InFlight() { --n_; }
  std::atomic<int>& n_;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::optional<ServerError> GrpcService::authorize(const grpc::ServerContext* ctx) const {
  if (auth_token_.empty()) return std::nullopt;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end())
    return error_from_condition(ServerCondition::Unauthenticated, "missing authorization metadata");
  const std::string value(it->second.data(), it->second.size());
  if (value.rfind("Bearer ", 0) != 0)
    return error_from_condition(ServerCondition::Unauthenticated, "authorization must use the Bearer scheme");
  if (!constant_time_equal(value.substr(7), auth_token_))
    return error_from_condition(ServerCondition::Unauthenticated, "invalid token");
  return std::nullopt;
}

grpc::Status GrpcService::finish(const char* method, double t0, const std::optional<ServerError>& error) {
  const grpc::StatusCode code = error ? error->code : grpc::StatusCode::OK;
  core_->metrics().record("grpc", method, grpc_code_name(code), now_s() - t0);
  return error ? error->to_grpc() : grpc::Status::OK;
}

grpc::Status GrpcService::Health(grpc::ServerContext* ctx, const backend::HealthMessage*, backend::Reply* out) {
  if (auto e = authorize(ctx)) return e->to_grpc();
  out->set_message("OK");
  return grpc::Status::OK;
}

grpc::Status GrpcService::Status(grpc::ServerContext* ctx, const backend::HealthMessage*,
                                 backend::StatusResponse* out) {
  if (auto e = authorize(ctx)) return e->to_grpc();
  core_->status(out);
  return grpc::Status::OK;
}

// Load failures are answered as Result{success=false, message} (LocalAI shows the message), not as a status.
grpc::Status GrpcService::LoadModel(grpc::ServerContext* ctx, const backend::ModelOptions* req, backend::Result* out) {
  InFlight guard(in_flight_);
  const double t0 = now_s();
  if (auto e = authorize(ctx)) return finish("LoadModel", t0, e);
  std::string name;
  auto e = core_->load(*req, &name);
  out->set_success(!e);
  out->set_message(e ? e->message : "loaded '" + name + "'");
  core_->metrics().record("grpc", "LoadModel", e ? grpc_code_name(e->code) : "OK", now_s() - t0);
  return grpc::Status::OK;
}

grpc::Status GrpcService::Free(grpc::ServerContext* ctx, const backend::HealthMessage*, backend::Result* out) {
  InFlight guard(in_flight_);
  const double t0 = now_s();
  if (auto e = authorize(ctx)) return finish("Free", t0, e);
  auto e = core_->free();
  out->set_success(!e);
  out->set_message(e ? e->message : "model freed");
  return finish("Free", t0, e);
}

grpc::Status GrpcService::Depth(grpc::ServerContext* ctx, const backend::DepthRequest* req,
                                backend::DepthResponse* out) {
  InFlight guard(in_flight_);
  const double t0 = now_s();
  if (auto e = authorize(ctx)) return finish("Depth", t0, e);
  return finish("Depth", t0, core_->depth(*req, out));
}

grpc::Status GrpcService::GenerateImage(grpc::ServerContext* ctx, const backend::GenerateImageRequest* req,
                                        backend::Result* out) {
  InFlight guard(in_flight_);
  const double t0 = now_s();
  if (auto e = authorize(ctx)) return finish("GenerateImage", t0, e);
  auto e = core_->generate_image(*req);
  out->set_success(!e);
  out->set_message(e ? e->message : req->dst());
  return finish("GenerateImage", t0, e);
}

grpc::Status GrpcService::Predict(grpc::ServerContext* ctx, const backend::PredictOptions* req, backend::Reply* out) {
  InFlight guard(in_flight_);
  const double t0 = now_s();
  if (auto e = authorize(ctx)) return finish("Predict", t0, e);
  std::string json;
  auto e = core_->predict(*req, &json);
  if (!e) out->set_message(json);
  return finish("Predict", t0, e);
}

}  // namespace dacpp::server
