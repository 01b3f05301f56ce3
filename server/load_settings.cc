#include "server/load_settings.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "engine/device_select.h"

namespace dacpp::server {
namespace {

int parse_int_option(const std::string& key, const std::string& value, int lo, int hi) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DACPP_CHECK(used == value.size() && !value.empty() && v >= lo && v <= hi, ErrorCode::InvalidArgument,
              "LoadModel: option '", key, ":", value, "' must be an integer in ", lo, "..", hi);
  return v;
}

bool parse_bool_option(const std::string& opt, const std::string& key, const std::string& value) {
  DACPP_CHECK(value == "true" || value == "false", ErrorCode::InvalidArgument, "LoadModel: option '", opt,
              "' must be ", key, ":true or ", key, ":false");
  return value == "true";
}

}  // namespace

std::string resolve_model_path(const backend::ModelOptions& o) {
  if (!o.modelfile().empty()) return o.modelfile();
  DACPP_CHECK(!o.model().empty(), ErrorCode::InvalidArgument,
              "LoadModel: neither ModelFile nor Model names a model file");
  if (o.model()[0] == '/' || o.modelpath().empty()) return o.model();
  return o.modelpath() + "/" + o.model();
}

LoadSettings parse_load_settings(const backend::ModelOptions& o) {
  LoadSettings s;
  s.runner.threads = std::max(0, o.threads());
  bool device_given = false, precision_given = false;
  for (const std::string& opt : o.options()) {
    const size_t colon = opt.find(':');
    const std::string key = opt.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : opt.substr(colon + 1);
    if (key == "size") {
      s.run.size = parse_int_option(key, value, 14, 8192);
    } else if (key == "threads") {
      s.runner.threads = parse_int_option(key, value, 0, 4096);
    } else if (key == "resize_to_input") {
      DACPP_CHECK(value == "true" || value == "false", ErrorCode::InvalidArgument, "LoadModel: option '", opt,
                  "' must be resize_to_input:true or resize_to_input:false");
      s.run.resize_to_input = value == "true";
    } else if (key == "metric_model") {
      // DA3 nested, depth-anything.cpp's two files: the model is the any-view file, this the metric branch.
      DACPP_CHECK(!value.empty(), ErrorCode::InvalidArgument, "LoadModel: option '", opt, "' names no file");
      s.load.metric_model = value[0] == '/' || o.modelpath().empty() ? value : o.modelpath() + "/" + value;
    } else if (key == "device") {
      s.load.device = parse_device(value);
      device_given = true;
    } else if (key == "precision") {
      s.load.precision = parse_precision(value);
      precision_given = true;
    } else if (key == "ray_pose") {
      s.run.ray_pose = parse_bool_option(opt, key, value);
      s.load.import.with_aux = s.run.ray_pose;
    } else {
      std::fprintf(stderr, "dacpp: warn: LoadModel: ignoring unknown option '%s'\n", opt.c_str());
    }
  }
  // LocalAI's model flags (YAML `cuda: true`, `main_gpu: N`, `f16: true`) where no option says otherwise.
  if (o.cuda() && !device_given) s.load.device = parse_device(o.maingpu().empty() ? "cuda" : "cuda:" + o.maingpu());
  if (o.f16memory() && !precision_given) {
    if (s.load.device.kind != DeviceKind::Cpu)
      s.load.precision = DType::F16;
    else
      std::fprintf(stderr,
                   "dacpp: warn: LoadModel: F16Memory ignored on the CPU (it runs f32, or bf16 with the "
                   "option precision:bf16)\n");
  }
  return s;
}

}  // namespace dacpp::server
