// BackendCore: the protocol-neutral server operations behind both the gRPC service and the REST routes: model
// identity checks, the response-size limit, and forwarding to the worker through the Supervisor.
#pragma once

#include <optional>
#include <string>

#include "backend.pb.h"
#include "server/error_map.h"
#include "server/metrics.h"
#include "server/supervisor.h"

namespace dacpp::server {

// LocalAI's client accepts at most 50 MB per message (spec/localai-backend.md §2.4).
constexpr uint64_t kDefaultMaxResponseBytes = 50ull * 1000 * 1000;

class BackendCore {
 public:
  BackendCore(Supervisor* supervisor, Metrics* metrics, uint64_t max_response_bytes)
      : supervisor_(supervisor), metrics_(metrics), max_response_bytes_(max_response_bytes) {}

  // Each returns nullopt on success (filling the output) or the error.
  std::optional<ServerError> load(const backend::ModelOptions& options, std::string* model_name);
  std::optional<ServerError> free();
  std::optional<ServerError> depth(const backend::DepthRequest& request, backend::DepthResponse* out);
  std::optional<ServerError> generate_image(const backend::GenerateImageRequest& request);
  std::optional<ServerError> predict(const backend::PredictOptions& request, std::string* json);
  void status(backend::StatusResponse* out) const;

  Supervisor& supervisor() { return *supervisor_; }
  Metrics& metrics() { return *metrics_; }

 private:
  // NOT_FOUND "model identity mismatch" when both sides are non-empty and differ (spec §1.2 ModelIdentity).
  std::optional<ServerError> check_identity(const std::string& identity) const;
  std::optional<ServerError> require_model(const char* op) const;

  Supervisor* supervisor_;
  Metrics* metrics_;
  uint64_t max_response_bytes_;
};

}  // namespace dacpp::server
