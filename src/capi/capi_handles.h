// The C API's handle types and its one exception barrier (include/dacpp.h). Everything that crosses the C
// boundary goes through call_guarded: a dacpp::Error becomes its status and message, std::bad_alloc becomes
// OUT_OF_MEMORY, any other exception INTERNAL; nothing is rethrown.
#pragma once

#include <memory>
#include <string>

#include "dacpp.h"
#include "engine/depth_result.h"
#include "engine/limits.h"
#include "engine/model.h"
#include "engine/runner.h"

struct dacpp_model {
  std::shared_ptr<const dacpp::Model> model;
  std::string device_name;  // dacpp_model_info.device points here
};

struct dacpp_runner {
  std::shared_ptr<const dacpp::Model> model;  // keeps the weights alive after dacpp_model_free
  std::unique_ptr<dacpp::Runner> runner;
  dacpp::Limits limits;
  bool apply_exif_orientation = true;
  std::string last_error;  // this runner's last failed call; cleared on success
};

struct dacpp_result {
  dacpp::DepthResult result;
};

namespace dacpp::capi {

// The message slot of one call: a runner's last_error, or this thread's slot for calls without a runner.
std::string& thread_error_slot();

dacpp_status status_of(ErrorCode code);

// Records `message` in `slot` without throwing (on allocation failure the slot keeps a fixed text).
void set_error(std::string& slot, const char* message);

// Runs `body` (returning void), mapping every exception to a status and its message into `slot`; clears `slot`
// on success.
template <typename Body>
dacpp_status call_guarded(std::string& slot, Body&& body) noexcept {
  try {
    body();
    slot.clear();
    return DACPP_STATUS_OK;
  } catch (const Error& e) {
    set_error(slot, e.what());
    return status_of(e.code());
  } catch (const std::bad_alloc&) {
    set_error(slot, "out of memory (std::bad_alloc)");
    return DACPP_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(slot, e.what());
    return DACPP_STATUS_INTERNAL;
  } catch (...) {
    set_error(slot, "unknown exception");
    return DACPP_STATUS_INTERNAL;
  }
}

// Throws InvalidArgument "<what>: <name> is NULL" when p is null.
void require(const void* p, const char* what, const char* name);

}  // namespace dacpp::capi
