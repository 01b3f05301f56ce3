// ModelBuilder (import_internal.h): metadata and f32 tensors of an imported model.
#include "core/error.h"
#include "formats/import_internal.h"

namespace dacpp::import_detail {

void ModelBuilder::set(const std::string& key, MetaValue v) { meta_[key] = std::move(v); }

void ModelBuilder::set_u32(const std::string& key, uint32_t v) {
  MetaValue m;
  m.type = MetaType::U32;
  m.i = v;
  m.u = v;
  set(key, m);
}

void ModelBuilder::set_i32(const std::string& key, int32_t v) {
  MetaValue m;
  m.type = MetaType::I32;
  m.i = v;
  set(key, m);
}

void ModelBuilder::set_f32(const std::string& key, float v) {
  MetaValue m;
  m.type = MetaType::F32;
  m.f = v;
  set(key, m);
}

void ModelBuilder::set_bool(const std::string& key, bool v) {
  MetaValue m;
  m.type = MetaType::Bool;
  m.i = v ? 1 : 0;
  set(key, m);
}

void ModelBuilder::set_string(const std::string& key, const std::string& v) {
  MetaValue m;
  m.type = MetaType::String;
  m.s = v;
  set(key, m);
}

void ModelBuilder::set_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  MetaValue m;
  m.type = MetaType::Array;
  m.elem_type = MetaType::I32;
  m.ai.assign(v.begin(), v.end());
  set(key, m);
}

void ModelBuilder::set_f32_array(const std::string& key, const std::vector<float>& v) {
  MetaValue m;
  m.type = MetaType::Array;
  m.elem_type = MetaType::F32;
  m.af.assign(v.begin(), v.end());
  set(key, m);
}

void ModelBuilder::tensor(const std::string& gguf_name, const TensorRecord& r) {
  DACPP_ASSERT(!names_.count(gguf_name), "duplicate output tensor ", gguf_name);
  // Every mapped parameter is a weight: an integer one is a corrupt checkpoint, not something to convert.
  DACPP_CHECK(r.dtype == DType::F32 || r.dtype == DType::F16 || r.dtype == DType::BF16, ErrorCode::InvalidModel,
              "parameter '", r.name, "' has dtype ", dtype_name(r.dtype), "; a weight must be f32, f16 or bf16");
  TensorRecord out = buffers_->to_f32(r);
  out.name = gguf_name;
  names_[gguf_name] = tensors_.size();
  tensors_.push_back(std::move(out));
}

std::shared_ptr<const ModelFile> ModelBuilder::finish(const std::string& path, size_t file_bytes) {
  return std::make_shared<const ModelFile>(path, meta_, tensors_, std::shared_ptr<void>(buffers_), file_bytes);
}

}  // namespace dacpp::import_detail
