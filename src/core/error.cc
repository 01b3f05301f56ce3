#include "core/error.h"

namespace dacpp {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::InvalidModel: return "InvalidModel";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::NotFound: return "NotFound";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::Backend: return "Backend";
    case ErrorCode::Io: return "Io";
    case ErrorCode::Internal: return "Internal";
  }
  return "Internal";
}

const char* error_code_tag(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "E_INVALID_ARGUMENT";
    case ErrorCode::InvalidModel: return "E_INVALID_MODEL";
    case ErrorCode::Unsupported: return "E_UNSUPPORTED";
    case ErrorCode::NotFound: return "E_NOT_FOUND";
    case ErrorCode::OutOfMemory: return "E_OOM";
    case ErrorCode::Backend: return "E_BACKEND";
    case ErrorCode::Io: return "E_IO";
    case ErrorCode::Internal: return "E_INTERNAL";
  }
  return "E_INTERNAL";
}

int error_code_exit_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return 2;
    case ErrorCode::InvalidModel: return 3;
    case ErrorCode::NotFound: return 3;
    case ErrorCode::Io: return 3;
    case ErrorCode::Unsupported: return 4;
    case ErrorCode::Backend: return 5;
    case ErrorCode::OutOfMemory: return 6;
    case ErrorCode::Internal: return 1;
  }
  return 1;
}

}  // namespace dacpp
