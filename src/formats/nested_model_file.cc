#include "formats/nested_model_file.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "formats/tensor_names.h"

namespace dacpp {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// The metric-branch tensor prefixes and key prefixes, and what they alias to.
const std::pair<std::string, std::string> kTensorAlias[] = {{"m_vit.", "vit."}, {"m_head.", "head."}};

std::vector<std::pair<std::string, std::string>> key_aliases() {
  return {{names::metric_key("vit."), names::key("vit.")}, {names::metric_key("head."), names::key("head.")}};
}

bool is_metric_tensor(const std::string& name) {
  for (const auto& [from, to] : kTensorAlias)
    if (starts_with(name, from)) return true;
  return false;
}

bool is_metric_key(const std::string& k) {
  return starts_with(k, names::metric_key(""));
}

}  // namespace

std::shared_ptr<const ModelFile> merge_nested(std::shared_ptr<const ModelFile> any_view,
                                              std::shared_ptr<const ModelFile> metric) {
  DACPP_CHECK(any_view && metric, ErrorCode::Internal, "merge_nested: null model file");
  const std::string mk = names::metric_key("vit.embed_dim");
  DACPP_CHECK(!any_view->has_key(mk), ErrorCode::InvalidModel, "model '", any_view->path(),
              "': is a nested metric-branch file (key '", mk, "'), expected the any-view file");
  DACPP_CHECK(any_view->has_key(names::key("vit.embed_dim")), ErrorCode::InvalidModel, "model '", any_view->path(),
              "': metadata key '", names::key("vit.embed_dim"), "' is missing (not an any-view model file)");
  DACPP_CHECK(metric->has_key(mk), ErrorCode::InvalidModel, "metric model '", metric->path(), "': metadata key '", mk,
              "' is missing: not the metric branch of a DA3 nested model (convert it with --nested-metric)");
  std::map<std::string, MetaValue> meta = any_view->metadata();
  for (const auto& [k, v] : metric->metadata())
    if (is_metric_key(k)) meta[k] = v;
  std::vector<TensorRecord> records = any_view->records();
  for (const TensorRecord& r : metric->records()) {
    DACPP_CHECK(is_metric_tensor(r.name), ErrorCode::InvalidModel, "metric model '", metric->path(), "': tensor '",
                r.name, "' is not a metric-branch tensor (m_vit.* / m_head.*)");
    DACPP_CHECK(!any_view->has_tensor(r.name), ErrorCode::InvalidModel, "model '", any_view->path(), "': tensor '",
                r.name, "' is also in the metric model '", metric->path(), "'");
    records.push_back(r);
  }
  const size_t bytes = any_view->file_bytes() + metric->file_bytes();
  const std::string path = any_view->path();
  auto keep = std::make_shared<std::pair<std::shared_ptr<const ModelFile>, std::shared_ptr<const ModelFile>>>(
      std::move(any_view), std::move(metric));
  return std::make_shared<ModelFile>(path, std::move(meta), std::move(records), std::move(keep), bytes);
}

std::shared_ptr<const ModelFile> nested_branch(const ModelFile& mf, NestedBranch branch) {
  std::map<std::string, MetaValue> meta;
  std::vector<TensorRecord> records;
  const bool metric = branch == NestedBranch::Metric;
  const auto aliases = key_aliases();
  for (const auto& [k, v] : mf.metadata()) {
    if (is_metric_key(k)) {
      if (!metric) continue;
      for (const auto& [from, to] : aliases)
        if (starts_with(k, from)) meta[to + k.substr(from.size())] = v;
      continue;
    }
    const bool branch_key = starts_with(k, names::key("vit.")) || starts_with(k, names::key("head.")) ||
                            starts_with(k, names::key("cam.")) || starts_with(k, names::key("gs."));
    if (!metric || !branch_key) meta[k] = v;
  }
  if (metric) {
    const std::string ck = names::key("checkpoint_name");
    std::string name = mf.get_string_or(ck, "");
    const std::string suffix = "-anyview";
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.resize(name.size() - suffix.size());
    MetaValue v;
    v.type = MetaType::String;
    v.s = name + "-metric";
    meta[ck] = v;
  }
  for (const TensorRecord& r : mf.records()) {
    if (is_metric_tensor(r.name) != metric) continue;
    TensorRecord c = r;
    for (const auto& [from, to] : kTensorAlias)
      if (starts_with(c.name, from)) c.name = to + c.name.substr(from.size());
    records.push_back(std::move(c));
  }
  auto out = std::make_shared<ModelFile>(mf.path() + (metric ? "#metric" : "#anyview"), std::move(meta),
                                         std::move(records), nullptr, mf.file_bytes());
  if (mf.placement() == nullptr) return out;
  // Non-owning: the placement belongs to `mf`, which outlives the branch (contract above).
  return out->placed(std::shared_ptr<const WeightPlacement>(std::shared_ptr<void>(), mf.placement()));
}

}  // namespace dacpp
