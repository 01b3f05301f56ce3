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

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Branch-local names back to stored ones in a piece of message text. Tensor names are recognised where a message
// spells them, right after a quote or an opening parenthesis.
std::string to_stored_names(std::string text) {
  for (const auto& [stored, local] : key_aliases()) replace_all(text, local, stored);
  for (const auto& [stored, local] : kTensorAlias)
    for (const char* before : {"'", "("}) replace_all(text, before + local, before + stored);
  return text;
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

bool holds_metric_branch(const ModelFile& mf) {
  for (const auto& kv : mf.metadata())
    if (is_metric_key(kv.first)) return true;
  for (const TensorRecord& r : mf.records())
    if (is_metric_tensor(r.name)) return true;
  return false;
}

bool is_metric_branch_only(const ModelFile& mf) {
  for (const TensorRecord& r : mf.records())
    if (!is_metric_tensor(r.name)) return false;
  return true;
}

Error metric_branch_error(const Error& e, const std::string& branch_path) {
  const std::string& m = e.message();
  std::string out;
  size_t from = 0;
  for (size_t at = m.find(branch_path); !branch_path.empty() && at != std::string::npos;
       at = m.find(branch_path, from)) {
    out += to_stored_names(m.substr(from, at - from)) + branch_path;
    from = at + branch_path.size();
  }
  return Error(e.code(), out + to_stored_names(m.substr(from)));
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
