// The one place where failures become protocol statuses (docs/errors.md, spec/localai-backend.md §5.2 B):
// dacpp::ErrorCode and the server's own conditions → gRPC code, HTTP status and the stable message tag.
// Every error message the server sends starts with "[dacpp:E_<CODE>] " and then names the cause.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "core/error.h"

namespace dacpp::server {

// Conditions detected by the server itself rather than by the engine.
enum class ServerCondition {
  NoModel,          // E_NO_MODEL: a request that needs a model before LoadModel succeeded → FAILED_PRECONDITION
  ResponseTooLarge, // E_RESPONSE_TOO_LARGE: the reply would pass the message-size cap → RESOURCE_EXHAUSTED
  WorkerCrashed,    // E_WORKER_CRASHED: the worker process died during the request → UNAVAILABLE
  WorkerStart,      // E_WORKER_START: the worker could not be started or reloaded → UNAVAILABLE
  Unauthenticated,  // E_UNAUTHENTICATED: missing or wrong bearer token → UNAUTHENTICATED
  ModelMismatch,    // E_MODEL_MISMATCH: ModelIdentity names another model → NOT_FOUND ("model identity mismatch")
  BadRequest,       // E_INVALID_ARGUMENT: a malformed request caught before the worker
  ShuttingDown,     // E_SHUTTING_DOWN: the server is stopping → UNAVAILABLE
};

// A failure ready for either protocol.
struct ServerError {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  int http_status = 500;
  std::string tag;      // "E_INVALID_ARGUMENT", ...
  std::string message;  // "[dacpp:<tag>] <cause>"

  grpc::Status to_grpc() const { return grpc::Status(code, message); }
};

grpc::StatusCode grpc_code_for(ErrorCode code);
int http_status_for(ErrorCode code);

ServerError error_from_engine(ErrorCode code, const std::string& cause);
ServerError error_from_condition(ServerCondition condition, const std::string& cause);
// Rebuilds an error from its wire form (worker replies): a dacpp::ErrorCode number or a condition tag.
ServerError error_from_worker(int engine_code, const std::string& condition_tag, const std::string& cause);

// "INVALID_ARGUMENT", "UNAVAILABLE", ... (metrics labels).
const char* grpc_code_name(grpc::StatusCode code);

}  // namespace dacpp::server
