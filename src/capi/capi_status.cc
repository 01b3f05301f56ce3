// Status names, the per-thread message slot and the exception barrier's helpers.
#include <cstring>

#include "capi/capi_handles.h"

namespace dacpp::capi {

std::string& thread_error_slot() {
  // Text only, for calls that have no handle to carry their message (a failed load): documented in dacpp.h.
  thread_local std::string slot;
  return slot;
}

dacpp_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return DACPP_STATUS_INVALID_ARGUMENT;
    case ErrorCode::InvalidModel: return DACPP_STATUS_INVALID_MODEL;
    case ErrorCode::Unsupported: return DACPP_STATUS_UNSUPPORTED;
    case ErrorCode::NotFound: return DACPP_STATUS_NOT_FOUND;
    case ErrorCode::OutOfMemory: return DACPP_STATUS_OUT_OF_MEMORY;
    case ErrorCode::Backend: return DACPP_STATUS_BACKEND;
    case ErrorCode::Io: return DACPP_STATUS_IO;
    case ErrorCode::Internal: return DACPP_STATUS_INTERNAL;
  }
  return DACPP_STATUS_INTERNAL;
}

void set_error(std::string& slot, const char* message) {
  try {
    slot.assign(message != nullptr ? message : "");
  } catch (...) {
    slot.clear();  // never allocates; the status still says what failed
  }
}

void require(const void* p, const char* what, const char* name) {
  DACPP_CHECK(p != nullptr, ErrorCode::InvalidArgument, what, ": ", name, " is NULL");
}

}  // namespace dacpp::capi

extern "C" {

const char* dacpp_status_name(dacpp_status status) {
  switch (status) {
    case DACPP_STATUS_OK: return "DACPP_STATUS_OK";
    case DACPP_STATUS_INVALID_ARGUMENT: return "DACPP_STATUS_INVALID_ARGUMENT";
    case DACPP_STATUS_INVALID_MODEL: return "DACPP_STATUS_INVALID_MODEL";
    case DACPP_STATUS_UNSUPPORTED: return "DACPP_STATUS_UNSUPPORTED";
    case DACPP_STATUS_NOT_FOUND: return "DACPP_STATUS_NOT_FOUND";
    case DACPP_STATUS_OUT_OF_MEMORY: return "DACPP_STATUS_OUT_OF_MEMORY";
    case DACPP_STATUS_BACKEND: return "DACPP_STATUS_BACKEND";
    case DACPP_STATUS_IO: return "DACPP_STATUS_IO";
    case DACPP_STATUS_INTERNAL: return "DACPP_STATUS_INTERNAL";
  }
  return "DACPP_STATUS_UNKNOWN";
}

const char* dacpp_last_error(void) {
  try {
    return dacpp::capi::thread_error_slot().c_str();
  } catch (...) {
    return "";
  }
}

}  // extern "C"
