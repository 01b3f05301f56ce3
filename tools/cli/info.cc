// dacpp info MODEL [--json] — what a model file holds: architecture, variant, dimensions, tensors, dtypes, size.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "formats/open_model_file.h"
#include "formats/model_file.h"
#include "formats/tensor_names.h"
#include "models/model_config.h"

namespace dacpp::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
};

// Metadata value as JSON, whatever its type (unknown types become null).
nlohmann::json meta_json(const MetaValue& v) {
  switch (v.type) {
    case MetaType::String: return v.s;
    case MetaType::Bool: return v.i != 0;
    case MetaType::F32:
    case MetaType::F64: return v.f;
    case MetaType::U8:
    case MetaType::U16:
    case MetaType::U32:
    case MetaType::U64: return v.u;
    case MetaType::I8:
    case MetaType::I16:
    case MetaType::I32:
    case MetaType::I64: return v.i;
    case MetaType::Array:
      if (!v.as.empty()) return v.as;
      if (!v.af.empty()) return v.af;
      return v.ai;
  }
  return nullptr;
}

// What the model can produce (models::ModelCapabilities); {"config_error": why} when its config does not parse
// (info describes broken files too).
nlohmann::json capabilities(const ModelFile& m) {
  try {
    const models::ModelConfig cfg = models::ModelConfig::from_file(m);
    const models::ModelCapabilities c = cfg.capabilities();
    return {{"kind", models::model_kind_name(cfg.kind)}, {"depth", true},       {"conf", c.conf},
            {"pose", c.pose},   {"sky", c.sky},          {"rays", c.rays},
            {"metric", c.metric}, {"multiview", c.multiview}};
  } catch (const Error& e) {
    return {{"config_error", e.what()}};
  }
}

nlohmann::json describe(const ModelFile& m) {
  nlohmann::json j;
  j["path"] = m.path();
  j["file_bytes"] = m.file_bytes();
  j["architecture"] = m.get_string_or(names::key("arch"), "unknown");
  j["variant"] = m.get_string_or(names::key("checkpoint_name"), "");
  nlohmann::json dims;
  for (const char* k : {"vit.embed_dim", "vit.depth", "vit.num_heads", "vit.head_dim", "vit.ffn_type",
                        "vit.out_layers", "vit.alt_start", "head.features", "head.out_channels",
                        "head.max_depth", "img.resize_mode", "img.resize_target"}) {
    const std::string key = names::key(k);
    if (m.has_key(key)) dims[k] = meta_json(m.value(key));
  }
  j["dims"] = dims;
  std::map<std::string, int64_t> dtypes;
  int64_t params = 0;
  for (const TensorRecord& r : m.records()) {
    dtypes[dtype_name(r.dtype)] += 1;
    params += shape_numel(r.shape);
  }
  j["tensor_count"] = m.records().size();
  j["parameters"] = params;
  j["dtypes"] = dtypes;
  j["capabilities"] = capabilities(m);
  return j;
}

void print_text(const nlohmann::json& j) {
  std::printf("path:         %s\n", j["path"].get<std::string>().c_str());
  std::printf("file size:    %.2f MB\n", j["file_bytes"].get<double>() / 1e6);
  std::printf("architecture: %s\n", j["architecture"].get<std::string>().c_str());
  std::printf("variant:      %s\n", j["variant"].get<std::string>().c_str());
  for (const auto& [k, v] : j["dims"].items()) std::printf("%-18s %s\n", (k + ":").c_str(), v.dump().c_str());
  std::printf("tensors:      %lld (%.2f M parameters)\n", static_cast<long long>(j["tensor_count"].get<int64_t>()),
              j["parameters"].get<double>() / 1e6);
  std::string dt;
  for (const auto& [k, v] : j["dtypes"].items()) dt += (dt.empty() ? "" : ", ") + k + " " + v.dump();
  std::printf("dtypes:       %s\n", dt.c_str());
  std::string caps;
  for (const auto& [k, v] : j["capabilities"].items())
    if (v.is_boolean() && v.get<bool>()) caps += (caps.empty() ? "" : ", ") + k;
  std::printf("capabilities: %s\n", caps.empty() ? "(config error)" : caps.c_str());
}

}  // namespace

Command register_info(CLI::App& app) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Describe a model file (GGUF or checkpoint)");
  sub->add_option("model", opt->model, "Model: .gguf file, .pth checkpoint or checkpoint folder")->required();
  sub->add_flag("--json", opt->json, "Print JSON on stdout");
  return {sub, [opt]() {
            std::shared_ptr<const ModelFile> m = open_model_file(opt->model);
            nlohmann::json j = describe(*m);
            if (opt->json) std::printf("%s\n", j.dump(2).c_str());
            else print_text(j);
            return 0;
          }};
}

}  // namespace dacpp::cli
