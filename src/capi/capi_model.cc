// dacpp_model_*: loading a model and describing it.
#include <cstring>
#include <new>
#include <string>

#include "capi/capi_handles.h"
#include "engine/device_select.h"

namespace dacpp::capi {
namespace {

// Device: NULL or "" mean "cpu"; precision: NULL or "" mean the device's default (bf16 on a GPU, f32 on the CPU);
// otherwise engine/device_select.h's names.
LoadOptions load_options(const dacpp_model_params& p) {
  LoadOptions lo;
  lo.device = p.device == nullptr || p.device[0] == '\0' ? Device::cpu() : parse_device(p.device);
  if (p.precision != nullptr && p.precision[0] != '\0') lo.precision = parse_precision(p.precision);
  return lo;
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
  p.precision = nullptr;
  return p;
}

dacpp_status dacpp_model_load(const char* path, const dacpp_model_params* params, dacpp_model** out_model) {
  if (out_model != nullptr) *out_model = nullptr;
  return call_guarded(thread_error_slot(), [&] {
    require(out_model, "dacpp_model_load", "out_model");
    require(path, "dacpp_model_load", "path");
    const dacpp_model_params p = params != nullptr ? *params : dacpp_model_default_params();
    const dacpp::LoadOptions lo = dacpp::capi::load_options(p);
    auto handle = std::make_unique<dacpp_model>();
    handle->model = dacpp::Model::load(path, lo);
    handle->device_name = dacpp::device_name(handle->model->device());
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
    info.device = model->device_name.c_str();
    info.precision = dacpp::dtype_name(model->model->precision());
    *out_info = info;
  });
}

}  // extern "C"
