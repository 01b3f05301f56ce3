// dacpp_result_*: read-only views of a result's maps.
#include "capi/capi_handles.h"

namespace dacpp::capi {
namespace {

// t: a [H, W] f32 host tensor, or undefined (→ an empty map).
dacpp_map map_of(const Tensor& t, const char* name) {
  dacpp_map m{nullptr, 0, 0};
  if (!t.defined()) return m;
  DACPP_CHECK(t.rank() == 2 && t.dtype() == DType::F32 && t.device().is_cpu(), ErrorCode::Internal,
              "dacpp_result_view: ", name, " map has shape ", shape_str(t.shape()), ", expected a [H, W] f32 host map");
  m.data = t.data<float>();
  m.height = static_cast<int>(t.shape()[0]);
  m.width = static_cast<int>(t.shape()[1]);
  return m;
}

}  // namespace
}  // namespace dacpp::capi

extern "C" {

dacpp_status dacpp_result_view(const dacpp_result* result, dacpp_depth_view* out_view) {
  return dacpp::capi::call_guarded(dacpp::capi::thread_error_slot(), [&] {
    dacpp::capi::require(result, "dacpp_result_view", "result");
    dacpp::capi::require(out_view, "dacpp_result_view", "out_view");
    const dacpp::DepthResult& r = result->result;
    dacpp_depth_view v;
    v.depth = dacpp::capi::map_of(r.depth, "depth");
    DACPP_CHECK(v.depth.data != nullptr, dacpp::ErrorCode::Internal, "dacpp_result_view: the result has no depth");
    v.sky = dacpp::capi::map_of(r.sky, "sky");
    v.confidence = dacpp::capi::map_of(r.conf, "confidence");
    v.units = r.units.c_str();
    v.source_width = r.source_width;
    v.source_height = r.source_height;
    v.processed_width = r.processed_width;
    v.processed_height = r.processed_height;
    *out_view = v;
  });
}

void dacpp_result_free(dacpp_result* result) { delete result; }

}  // extern "C"
