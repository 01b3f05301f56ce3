// Internal pieces of the checkpoint importer (formats/import.h): the source-parameter index that tracks which
// parameters were used, the builder of the output ModelFile, and the per-part mappers shared by the families.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/checkpoint_tensors.h"
#include "formats/import.h"
#include "formats/tensor_buffers.h"

namespace dacpp::import_detail {

// The parameters of one checkpoint by source name, with a used-flag each.
class SourceIndex {
 public:
  // Takes the reader's output; its keepalive moves into `buffers`. Duplicate names are InvalidModel.
  SourceIndex(CheckpointTensors ck, std::shared_ptr<TensorBuffers> buffers);

  const std::string& path() const { return path_; }
  size_t file_bytes() const { return file_bytes_; }
  TensorBuffers& buffers() { return *buffers_; }
  std::shared_ptr<TensorBuffers> buffers_ptr() const { return buffers_; }

  bool has(const std::string& name) const { return by_name_.count(name) != 0; }
  // Does any parameter start with `prefix`?
  bool has_prefix(const std::string& prefix) const;
  // Shape of a parameter; InvalidModel "required parameter 'x' is missing" when absent.
  const Shape& shape(const std::string& name) const;
  // Marks the parameter used and returns it; missing → InvalidModel naming it; a shape other than `expected`
  // (when given) → InvalidModel naming it and both shapes.
  TensorRecord take(const std::string& name);
  TensorRecord take(const std::string& name, const Shape& expected);
  // Marks the parameter (when present) or every parameter under `prefix` as deliberately unused.
  void ignore(const std::string& name);
  void ignore_prefix(const std::string& prefix);
  // The number n such that prefix + "0" + suffix ... prefix + (n-1) + suffix all exist.
  int count_indexed(const std::string& prefix, const std::string& suffix) const;
  // InvalidModel naming the first parameter that was neither taken nor ignored (and how many there are).
  void check_all_used() const;
  // All records, in source order (for renaming passes).
  const std::vector<TensorRecord>& records() const { return records_; }

  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string path_;
  size_t file_bytes_ = 0;
  std::vector<TensorRecord> records_;
  std::vector<bool> used_;
  std::map<std::string, size_t> by_name_;
  std::shared_ptr<TensorBuffers> buffers_;
};

// Collects metadata and f32 tensors for the output ModelFile.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::shared_ptr<TensorBuffers> buffers) : buffers_(std::move(buffers)) {}

  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_f32(const std::string& key, float v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  void set_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void set_f32_array(const std::string& key, const std::vector<float>& v);
  // Adds `r` as f32 under `gguf_name` (converting f16/bf16/i32). A duplicate name is Internal.
  void tensor(const std::string& gguf_name, const TensorRecord& r);

  std::shared_ptr<const ModelFile> finish(const std::string& path, size_t file_bytes);

 private:
  void set(const std::string& key, MetaValue v);

  std::shared_ptr<TensorBuffers> buffers_;
  std::map<std::string, MetaValue> meta_;
  std::vector<TensorRecord> tensors_;
  std::map<std::string, size_t> names_;
};

// Builds a full metadata key: names::key or names::metric_key.
using KeyFn = std::function<std::string(const std::string&)>;

// ---- DINOv2 backbone ----
struct VitDims {
  int64_t embed = 0, depth = 0, heads = 0, head_dim = 64, mlp_hidden = 0, grid = 0;
  bool swiglu = false;
  bool qkv_bias = true;
};
struct VitSpec {
  std::string src;            // source prefix, e.g. "pretrained." or "model.backbone.pretrained."
  std::string out;            // "vit" or "m_vit"
  bool camera_token = false;  // DA3 any-view
  int alt_start = -1, rope_start = -1, qknorm_start = -1;
  bool cat_token = false;
  float init_values = 1.0f;
  std::vector<int32_t> out_layers;
};
VitDims infer_vit(const SourceIndex& src, const std::string& prefix);
void map_vit(SourceIndex& src, const VitSpec& spec, const VitDims& d, ModelBuilder& b);
void write_vit_meta(ModelBuilder& b, const KeyFn& key, const VitSpec& spec, const VitDims& d);

// ---- DPT heads (DA2 DPTHead, DA3 DPT / DualDPT, GSDPT) ----
struct HeadDims {
  int64_t features = 0, hidden = 0, out_dim = 0;
  std::vector<int32_t> out_channels;  // 4
};
struct HeadSpec {
  std::string src;        // e.g. "depth_head." or "model.head."
  std::string out;        // "head", "m_head" or "gs"
  int64_t dim_in = 0;     // C
  bool norm = false;      // DualDPT input LayerNorm
  bool rn4_rc1 = false;   // DA2: refinenet4 owns resConfUnit1
  bool sky = false;       // DA3 mono/metric sky branch
  bool aux = false;       // DualDPT aux head in the source
  bool keep_aux = false;  // ... and emit it
  bool merger = false;    // GSDPT images_merger
};
HeadDims infer_head(const SourceIndex& src, const HeadSpec& spec);
void map_head(SourceIndex& src, const HeadSpec& spec, const HeadDims& d, ModelBuilder& b);

// ---- families ----
// out_layers rule per (family, depth); InvalidModel naming the path when there is none.
std::vector<int32_t> da2_out_layers(const SourceIndex& src, int64_t depth);
void write_common_meta(ModelBuilder& b, const std::string& arch, const std::string& name);
void write_img_meta(ModelBuilder& b, bool da3);

// Each importer fills `b` from `src` and checks that every parameter was used.
void import_da2(SourceIndex& src, const ImportOptions& opt, float max_depth, ModelBuilder& b);
// Renames DA2 transformers keys to official ones (concatenating q/k/v); returns a new index over the same buffers.
CheckpointTensors da2_hf_to_official(const CheckpointTensors& hf, TensorBuffers& buffers);
void import_da3(SourceIndex& src, const ImportOptions& opt, const std::string& model_name, ModelBuilder& b);

}  // namespace dacpp::import_detail
