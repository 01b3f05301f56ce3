#include "server/rest_json.h"

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "server/image_source.h"

namespace dacpp::server {
namespace {

bool get_bool(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return false;
  DACPP_CHECK(j[key].is_boolean(), ErrorCode::InvalidArgument, "/v1/depth: '", key, "' must be a boolean");
  return j[key].get<bool>();
}

}  // namespace

backend::DepthRequest depth_request_from_json(const std::string& body) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    DACPP_THROW(ErrorCode::InvalidArgument, "/v1/depth: the body is not JSON (", e.what(), ")");
  }
  DACPP_CHECK(j.is_object(), ErrorCode::InvalidArgument, "/v1/depth: the body must be a JSON object");
  DACPP_CHECK(j.contains("image") && j["image"].is_string(), ErrorCode::InvalidArgument,
              "/v1/depth: 'image' (a data: URI with base64 image bytes) is required");
  const std::string image = j["image"].get<std::string>();
  DACPP_CHECK(image.rfind("http://", 0) != 0 && image.rfind("https://", 0) != 0, ErrorCode::InvalidArgument,
              "/v1/depth: 'image' is a URL; dacpp-server does not fetch URLs, send a data: URI");
  DACPP_CHECK(image.rfind("data:", 0) == 0, ErrorCode::InvalidArgument,
              "/v1/depth: invalid image input: 'image' must be a data: URI (data:<mime>;base64,<bytes>)");
  backend::DepthRequest r;
  r.set_src(image);
  if (j.contains("model") && j["model"].is_string()) r.set_modelidentity(j["model"].get<std::string>());
  if (j.contains("dst") && j["dst"].is_string()) r.set_dst(j["dst"].get<std::string>());
  r.set_include_depth(get_bool(j, "include_depth"));
  r.set_include_confidence(get_bool(j, "include_confidence"));
  r.set_include_pose(get_bool(j, "include_pose"));
  r.set_include_sky(get_bool(j, "include_sky"));
  r.set_include_points(get_bool(j, "include_points"));
  if (!r.include_depth() && !r.include_confidence() && !r.include_pose() && !r.include_sky() && !r.include_points()) {
    r.set_include_depth(true), r.set_include_confidence(true), r.set_include_pose(true), r.set_include_sky(true);
  }
  if (j.contains("points_conf_thresh") && !j["points_conf_thresh"].is_null()) {
    DACPP_CHECK(j["points_conf_thresh"].is_number(), ErrorCode::InvalidArgument,
                "/v1/depth: 'points_conf_thresh' must be a number");
    r.set_points_conf_thresh(j["points_conf_thresh"].get<float>());
  }
  if (j.contains("exports") && !j["exports"].is_null()) {
    DACPP_CHECK(j["exports"].is_array(), ErrorCode::InvalidArgument, "/v1/depth: 'exports' must be an array");
    for (const auto& e : j["exports"]) {
      DACPP_CHECK(e.is_string(), ErrorCode::InvalidArgument, "/v1/depth: 'exports' must hold strings");
      r.add_exports(e.get<std::string>());
    }
  }
  return r;
}

namespace {

// Appends `v` as a JSON array of its float32 values, each in the shortest form that reads back to the same float
// (std::to_chars); a non-finite value is null, as nlohmann::json writes it. A 1920×1080 depth map is 2 073 600
// numbers: written here instead of through a json array of that many elements (each a heap node, then printed as
// the double the float widens to, e.g. 0.10000000149011612 for 0.1f).
void append_floats(std::string* out, const google::protobuf::RepeatedField<float>& v) {
  out->reserve(out->size() + static_cast<size_t>(v.size()) * 12 + 2);
  out->push_back('[');
  char buf[32];
  for (int i = 0; i < v.size(); ++i) {
    if (i > 0) out->push_back(',');
    const float x = v.Get(i);
    if (!std::isfinite(x)) {
      out->append("null");
      continue;
    }
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), x);
    out->append(buf, r.ptr);
  }
  out->push_back(']');
}

}  // namespace

std::string depth_response_to_json(const backend::DepthResponse& r) {
  nlohmann::json j;  // the small members; the float arrays are appended after them
  j["width"] = r.width();
  j["height"] = r.height();
  j["is_metric"] = r.is_metric();
  if (r.num_points() != 0) j["num_points"] = r.num_points();
  if (!r.point_colors().empty())
    j["point_colors"] = encode_base64(reinterpret_cast<const uint8_t*>(r.point_colors().data()),
                                      r.point_colors().size());
  if (r.export_paths_size() > 0)
    j["export_paths"] = std::vector<std::string>(r.export_paths().begin(), r.export_paths().end());
  std::string out = j.dump();  // "{...}", never empty: width, height and is_metric are always there
  out.pop_back();
  const auto put = [&out](const char* key, const google::protobuf::RepeatedField<float>& v) {
    if (v.empty()) return;
    out.append(",\"").append(key).append("\":");
    append_floats(&out, v);
  };
  put("depth", r.depth());
  put("confidence", r.confidence());
  put("sky", r.sky());
  put("extrinsics", r.extrinsics());
  put("intrinsics", r.intrinsics());
  put("points", r.points());
  out.push_back('}');
  return out;
}

std::string error_to_json(int http_status, const std::string& message) {
  nlohmann::json j;
  j["error"] = {{"code", http_status}, {"message", message}, {"type", ""}};
  return j.dump();
}

}  // namespace dacpp::server
