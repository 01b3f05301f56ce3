// GrpcService: LocalAI's Backend service (proto/backend.proto) over BackendCore. Health and Status answer from
// the front process without touching the worker. Every call checks LOCALAI_GRPC_AUTH_TOKEN when it is set
// (metadata "authorization: Bearer <token>", UNAUTHENTICATED otherwise), as LocalAI's Go backends do.
#pragma once

#include <atomic>
#include <string>

#include "backend.grpc.pb.h"
#include "server/backend_core.h"

namespace dacpp::server {

class GrpcService final : public backend::Backend::Service {
 public:
  GrpcService(BackendCore* core, std::string auth_token) : core_(core), auth_token_(std::move(auth_token)) {}

  grpc::Status Health(grpc::ServerContext* ctx, const backend::HealthMessage* req, backend::Reply* out) override;
  grpc::Status Free(grpc::ServerContext* ctx, const backend::HealthMessage* req, backend::Result* out) override;
  grpc::Status Predict(grpc::ServerContext* ctx, const backend::PredictOptions* req, backend::Reply* out) override;
  grpc::Status LoadModel(grpc::ServerContext* ctx, const backend::ModelOptions* req, backend::Result* out) override;
  grpc::Status GenerateImage(grpc::ServerContext* ctx, const backend::GenerateImageRequest* req,
                             backend::Result* out) override;
  grpc::Status Status(grpc::ServerContext* ctx, const backend::HealthMessage* req,
                      backend::StatusResponse* out) override;
  grpc::Status Depth(grpc::ServerContext* ctx, const backend::DepthRequest* req, backend::DepthResponse* out) override;

  // Calls inside a handler now (for the graceful stop: gRPC's own Shutdown also waits on idle connections).
  int in_flight() const { return in_flight_.load(); }

 private:
  std::optional<ServerError> authorize(const grpc::ServerContext* ctx) const;
  // Records the call in the metrics and turns an error into its status.
  grpc::Status finish(const char* method, double t0, const std::optional<ServerError>& error);

  BackendCore* core_;
  std::string auth_token_;
  std::atomic<int> in_flight_{0};
};

// true when `a` equals `b`, in time that depends only on their lengths.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace dacpp::server
