// SourceIndex (import_internal.h): the checkpoint's parameters with used-flags.
#include "core/error.h"
#include "formats/import_internal.h"

namespace dacpp::import_detail {

SourceIndex::SourceIndex(CheckpointTensors ck, std::shared_ptr<TensorBuffers> buffers)
    : path_(std::move(ck.path)), file_bytes_(ck.file_bytes), records_(std::move(ck.tensors)),
      buffers_(std::move(buffers)) {
  if (ck.keepalive) buffers_->hold(ck.keepalive);
  used_.assign(records_.size(), false);
  for (size_t i = 0; i < records_.size(); ++i)
    if (!by_name_.emplace(records_[i].name, i).second) fail("parameter '" + records_[i].name + "' appears twice");
}

void SourceIndex::fail(const std::string& what) const {
  DACPP_THROW(ErrorCode::InvalidModel, "checkpoint '", path_, "': ", what);
}

bool SourceIndex::has_prefix(const std::string& prefix) const {
  auto it = by_name_.lower_bound(prefix);
  return it != by_name_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

const Shape& SourceIndex::shape(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) fail("required parameter '" + name + "' is missing");
  return records_[it->second].shape;
}

TensorRecord SourceIndex::take(const std::string& name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) fail("required parameter '" + name + "' is missing");
  used_[it->second] = true;
  return records_[it->second];
}

TensorRecord SourceIndex::take(const std::string& name, const Shape& expected) {
  TensorRecord r = take(name);
  if (r.shape != expected)
    fail("parameter '" + name + "' has shape " + shape_str(r.shape) + ", expected " + shape_str(expected));
  return r;
}

void SourceIndex::ignore(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) used_[it->second] = true;
}

void SourceIndex::ignore_prefix(const std::string& prefix) {
  for (auto it = by_name_.lower_bound(prefix); it != by_name_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    used_[it->second] = true;
  }
}

int SourceIndex::count_indexed(const std::string& prefix, const std::string& suffix) const {
  int n = 0;
  while (has(prefix + std::to_string(n) + suffix)) ++n;
  return n;
}

void SourceIndex::check_all_used() const {
  size_t unused = 0;
  const TensorRecord* first = nullptr;
  for (size_t i = 0; i < records_.size(); ++i) {
    if (used_[i]) continue;
    if (!first) first = &records_[i];
    ++unused;
  }
  if (first)
    fail("parameter '" + first->name + "' " + shape_str(first->shape) + " is not mapped to any GGUF tensor" +
         (unused > 1 ? " (and " + std::to_string(unused - 1) + " more)" : std::string()));
}

}  // namespace dacpp::import_detail
