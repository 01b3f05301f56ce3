// dacpp_model_*: loading a model and describing it.
#include <cstring>
#include <new>
#include <string>

#include "capi/capi_handles.h"

namespace dacpp::capi {
namespace {

// "cpu" (or NULL / "") runs; "cuda" / "cuda:N" is recognised but not served by this version's Model.
void check_device(const char* device) {
  if (device == nullptr || device[0] == '\0' || std::strcmp(device, "cpu") == 0) return;
  const std::string d(device);
  const bool cuda = d == "cuda" || (d.rfind("cuda:", 0) == 0 && d.size() > 5 &&
                                    d.find_first_not_of("0123456789", 5) == std::string::npos);
  DACPP_CHECK(!cuda, ErrorCode::Unsupported, "model load: device '", d,
              "': this version runs models on the CPU only (device \"cpu\")");
  DACPP_THROW(ErrorCode::InvalidArgument, "model load: device '", d, "' is not \"cpu\" or \"cuda[:N]\"");
}

}  // namespace
}  // namespace dacpp::capi

using dacpp::capi::call_guarded;
using dacpp::capi::require;
using dacpp::capi::thread_error_slot;

extern "C" {

dacpp_model_params dacpp_model_default_params(void) {
  dacpp_model_params p;
  p.device = "cpu";
  return p;
}

dacpp_status dacpp_model_load(const char* path, const dacpp_model_params* params, dacpp_model** out_model) {
  if (out_model != nullptr) *out_model = nullptr;
  return call_guarded(thread_error_slot(), [&] {
    require(out_model, "dacpp_model_load", "out_model");
    require(path, "dacpp_model_load", "path");
    const dacpp_model_params p = params != nullptr ? *params : dacpp_model_default_params();
    dacpp::capi::check_device(p.device);
    auto handle = std::make_unique<dacpp_model>();
    handle->model = dacpp::Model::load(path);
    *out_model = handle.release();
  });
}

void dacpp_model_free(dacpp_model* model) { delete model; }

dacpp_status dacpp_model_get_info(const dacpp_model* model, dacpp_model_info* out_info) {
  return call_guarded(thread_error_slot(), [&] {
    require(model, "dacpp_model_get_info", "model");
    require(out_info, "dacpp_model_get_info", "out_info");
    const dacpp::models::ModelConfig& cfg = model->model->config();
    const dacpp::models::ModelCapabilities caps = cfg.capabilities();
    dacpp_model_info info;
    info.name = cfg.checkpoint_name.c_str();
    info.kind = dacpp::models::model_kind_name(cfg.kind);
    info.metric = caps.metric ? 1 : 0;
    info.has_sky = caps.sky ? 1 : 0;
    info.has_confidence = caps.conf ? 1 : 0;
    info.default_size = cfg.img.resize_target;
    info.patch_size = cfg.vit.patch_size;
    *out_info = info;
  });
}

}  // extern "C"
