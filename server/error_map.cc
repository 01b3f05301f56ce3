#include "server/error_map.h"

namespace dacpp::server {
namespace {

struct ConditionRow {
  ServerCondition condition;
  const char* tag;
  grpc::StatusCode code;
  int http;
};

// HTTP statuses follow LocalAI's mapBackendError where it has one (400, 404, 412, 501), else docs/errors.md.
constexpr ConditionRow kConditions[] = {
    {ServerCondition::NoModel, "E_NO_MODEL", grpc::StatusCode::FAILED_PRECONDITION, 412},
    {ServerCondition::ResponseTooLarge, "E_RESPONSE_TOO_LARGE", grpc::StatusCode::RESOURCE_EXHAUSTED, 413},
    {ServerCondition::WorkerCrashed, "E_WORKER_CRASHED", grpc::StatusCode::UNAVAILABLE, 503},
    {ServerCondition::WorkerStart, "E_WORKER_START", grpc::StatusCode::UNAVAILABLE, 503},
    {ServerCondition::Unauthenticated, "E_UNAUTHENTICATED", grpc::StatusCode::UNAUTHENTICATED, 401},
    {ServerCondition::ModelMismatch, "E_MODEL_MISMATCH", grpc::StatusCode::NOT_FOUND, 404},
    {ServerCondition::BadRequest, "E_INVALID_ARGUMENT", grpc::StatusCode::INVALID_ARGUMENT, 400},
    {ServerCondition::ShuttingDown, "E_SHUTTING_DOWN", grpc::StatusCode::UNAVAILABLE, 503},
};

std::string tagged(const std::string& tag, const std::string& cause) { return "[dacpp:" + tag + "] " + cause; }

}  // namespace

grpc::StatusCode grpc_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::InvalidModel: return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::Unsupported: return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorCode::NotFound: return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::OutOfMemory: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::Backend: return grpc::StatusCode::INTERNAL;
    case ErrorCode::Io: return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::Internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

int http_status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return 400;
    case ErrorCode::InvalidModel: return 422;
    case ErrorCode::Unsupported: return 501;
    case ErrorCode::NotFound: return 404;
    case ErrorCode::OutOfMemory: return 503;
    case ErrorCode::Backend: return 500;
    case ErrorCode::Io: return 503;
    case ErrorCode::Internal: return 500;
  }
  return 500;
}

ServerError error_from_engine(ErrorCode code, const std::string& cause) {
  ServerError e;
  e.code = grpc_code_for(code);
  e.http_status = http_status_for(code);
  e.tag = error_code_tag(code);
  e.message = tagged(e.tag, cause);
  return e;
}

ServerError error_from_condition(ServerCondition condition, const std::string& cause) {
  for (const ConditionRow& row : kConditions) {
    if (row.condition != condition) continue;
    ServerError e;
    e.code = row.code;
    e.http_status = row.http;
    e.tag = row.tag;
    e.message = tagged(e.tag, cause);
    return e;
  }
  return error_from_engine(ErrorCode::Internal, cause);
}

ServerError error_from_worker(int engine_code, const std::string& condition_tag, const std::string& cause) {
  if (!condition_tag.empty()) {
    for (const ConditionRow& row : kConditions)
      if (condition_tag == row.tag) return error_from_condition(row.condition, cause);
    return error_from_engine(ErrorCode::Internal, "unknown worker condition '" + condition_tag + "': " + cause);
  }
  if (engine_code < static_cast<int>(ErrorCode::InvalidArgument) || engine_code > static_cast<int>(ErrorCode::Internal))
    return error_from_engine(ErrorCode::Internal, "worker sent unknown error code " + std::to_string(engine_code) +
                                                      ": " + cause);
  return error_from_engine(static_cast<ErrorCode>(engine_code), cause);
}

const char* grpc_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "UNKNOWN";
  }
}

}  // namespace dacpp::server
