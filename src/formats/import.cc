// import_checkpoint: picks the source family from the path (file or folder) and its keys, then runs the family's
// mapper (import_da2.cc, import_da2_hf.cc, import_da3.cc). write_gguf: ModelFile → GgufWriter.
#include "formats/import.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/tensor.h"
#include "formats/gguf_writer.h"
#include "formats/import_internal.h"
#include "formats/nested_model_file.h"
#include "formats/pth_reader.h"
#include "formats/safetensors_reader.h"
#include "formats/tensor_names.h"

namespace dacpp {
namespace {

using namespace import_detail;
using nlohmann::json;

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "a/b/DA3-BASE/" → "DA3-BASE"; "x/depth_anything_v2_vits.pth" → "depth_anything_v2_vits".
std::string stem(std::string p) {
  const bool dir = is_dir(p);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash != std::string::npos) p = p.substr(slash + 1);
  const size_t dot = p.rfind('.');
  if (dot != std::string::npos && dot > 0 && !dir) p = p.substr(0, dot);
  return p;
}

json read_config(const std::string& path) {
  std::ifstream f(path);
  if (!f) return json::object();
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    json j = json::parse(ss.str());
    if (!j.is_object()) DACPP_THROW(ErrorCode::InvalidModel, "config '", path, "' is not a JSON object");
    return j;
  } catch (const json::exception& e) {
    DACPP_THROW(ErrorCode::InvalidModel, "config '", path, "' is not valid JSON: ", e.what());
  }
}

bool has_key_prefix(const CheckpointTensors& ck, const std::string& prefix) {
  for (const auto& r : ck.tensors)
    if (r.name.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

// DA2 metric scale: the option, else the HF config, else the file name.
float da2_max_depth(const ImportOptions& opt, const json& config, const std::string& path) {
  if (opt.max_depth > 0) return opt.max_depth;
  if (config.value("depth_estimation_type", std::string()) == "metric") {
    const auto md = config.find("max_depth");
    if (md != config.end() && md->is_number() && md->get<double>() > 0) return md->get<float>();
  }
  const std::string name = lower(stem(path));
  if (name.find("hypersim") != std::string::npos || name.find("indoor") != std::string::npos) return 20.0f;
  if (name.find("vkitti") != std::string::npos || name.find("outdoor") != std::string::npos) return 80.0f;
  return 0.0f;
}

std::string da3_model_name(const json& config, const CheckpointTensors& ck) {
  const auto it = config.find("model_name");
  if (it != config.end() && it->is_string()) return lower(it->get<std::string>());
  if (has_key_prefix(ck, "model.da3_metric.")) return "da3nested-giant-large";
  for (const auto& r : ck.tensors)
    if (ends_with(r.name, "backbone.pretrained.camera_token")) return "da3-any";
  return "da3mono-large";
}

}  // namespace

std::shared_ptr<const ModelFile> import_checkpoint(const std::string& path, const ImportOptions& opt_in) {
  ImportOptions opt = opt_in;
  std::string weights = path;
  json config = json::object();
  if (is_dir(path)) {
    weights = path + "/model.safetensors";
    DACPP_CHECK(is_file(weights), ErrorCode::NotFound, "checkpoint folder '", path, "' has no model.safetensors");
    config = read_config(path + "/config.json");
  } else {
    DACPP_CHECK(is_file(path), ErrorCode::NotFound, "checkpoint '", path, "' does not exist");
    const std::string sibling = path.substr(0, path.rfind('/') + 1) + "config.json";
    if (ends_with(path, ".safetensors") && path.find('/') != std::string::npos) config = read_config(sibling);
  }
  if (opt.name.empty()) opt.name = stem(path);

  CheckpointTensors ck = ends_with(lower(weights), ".safetensors") ? read_safetensors(weights) : read_pth(weights);
  auto buffers = std::make_shared<TensorBuffers>();
  ModelBuilder b(buffers);
  if (has_key_prefix(ck, "model.")) {
    const std::string model_name = da3_model_name(config, ck);
    // DA3METRIC and DA3MONO share one architecture: the checkpoint name is the only marker depth-anything.cpp
    // files carry. Keep the folder name (as that project does) unless it would say the wrong thing.
    const bool metric = model_name.rfind("da3metric", 0) == 0;
    if (opt_in.name.empty() && metric != (upper(opt.name).find("METRIC") != std::string::npos))
      opt.name = upper(model_name);
    const bool nested = model_name.rfind("da3nested", 0) == 0;
    if (opt.nested_metric) opt.nested_part = ImportOptions::NestedPart::Metric;
    if (nested && opt.nested_part == ImportOptions::NestedPart::Both) {
      ck = CheckpointTensors();  // each branch re-reads the checkpoint (mapped, not copied)
      ImportOptions one = opt_in;
      one.name = opt.name;
      one.nested_part = ImportOptions::NestedPart::AnyView;
      std::shared_ptr<const ModelFile> any = import_checkpoint(path, one);
      one.nested_part = ImportOptions::NestedPart::Metric;
      return merge_nested(std::move(any), import_checkpoint(path, one));
    }
    opt.nested_metric = opt.nested_part == ImportOptions::NestedPart::Metric;
    if (nested && opt_in.name.empty())
      opt.name += opt.nested_metric ? "-metric" : "-anyview";
    SourceIndex src(std::move(ck), buffers);
    import_da3(src, opt, model_name == "da3-any" ? "da3-" : model_name, b);
    return b.finish(path, src.file_bytes());
  }
  const float max_depth = da2_max_depth(opt, config, path);
  if (has_key_prefix(ck, "backbone.embeddings.")) {
    CheckpointTensors renamed = da2_hf_to_official(ck, *buffers);
    SourceIndex src(std::move(renamed), buffers);
    import_da2(src, opt, max_depth, b);
    return b.finish(path, src.file_bytes());
  }
  if (has_key_prefix(ck, "pretrained.")) {
    SourceIndex src(std::move(ck), buffers);
    import_da2(src, opt, max_depth, b);
    return b.finish(path, src.file_bytes());
  }
  DACPP_THROW(ErrorCode::InvalidModel, "checkpoint '", path, "': not a Depth Anything checkpoint (no 'model.*', ",
              "'pretrained.*' or 'backbone.embeddings.*' parameters among ", ck.tensors.size(), ")");
}

void write_gguf(const ModelFile& m, const std::string& out_path) {
  GgufWriter w;
  w.add_string(names::kGeneralArchitecture,
               m.has_key(names::kGeneralArchitecture) ? m.get_string(names::kGeneralArchitecture) : names::kArchitecture);
  for (const auto& [key, v] : m.metadata()) {
    if (key == names::kGeneralArchitecture) continue;
    switch (v.type) {
      case MetaType::U32: w.add_u32(key, m.get_u32(key)); break;
      case MetaType::I32: w.add_i32(key, m.get_i32(key)); break;
      case MetaType::F32: w.add_f32(key, m.get_f32(key)); break;
      case MetaType::Bool: w.add_bool(key, m.get_bool(key)); break;
      case MetaType::String: w.add_string(key, v.s); break;
      case MetaType::Array:
        if (v.elem_type == MetaType::I32) w.add_i32_array(key, m.get_i32_array(key));
        else if (v.elem_type == MetaType::F32) w.add_f32_array(key, m.get_f32_array(key));
        else if (v.elem_type == MetaType::String) w.add_string_array(key, v.as);
        else DACPP_THROW(ErrorCode::InvalidArgument, "write_gguf: key '", key, "' is an array of ",
                         meta_type_name(v.elem_type), " (only INT32, FLOAT32 and STRING arrays are written)");
        break;
      default:
        DACPP_THROW(ErrorCode::InvalidArgument, "write_gguf: key '", key, "' has type ", meta_type_name(v.type),
                    " (only u32, i32, f32, bool, string and arrays are written)");
    }
  }
  for (const TensorRecord& r : m.records())
    w.add_tensor(r.name, Tensor::view(const_cast<void*>(r.data), r.shape, r.dtype));
  w.write(out_path);
}

}  // namespace dacpp
