// Helpers for the model tests: NPY → Tensor, relative L2 error, and a synthetic in-memory model (random weights,
// every tensor and key a DA2 or DA3-mono network needs) for tests that must not depend on fixtures.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "formats/model_file.h"

namespace dacpp::testing {

// Reads a float32 C-order .npy file into a host tensor; fails the calling test (ADD_FAILURE) and returns an
// undefined tensor when it cannot.
Tensor load_npy(const std::string& path);

// ‖a − b‖₂ / ‖b‖₂ over all elements (shapes must have equal numel; returns +inf otherwise).
double rel_l2(const Tensor& a, const Tensor& b);

// Fails the calling test unless `got` is defined, has the reference's element count and is within relative L2 `tol`
// of the float32 .npy at ref_path. With DACPP_PARITY_VERBOSE set, prints "  <what> rel L2 <e>".
void expect_close_to_npy(const std::string& what, const Tensor& got, const std::string& ref_path, double tol);

// A small model file built in memory. Defaults: DA2 relative, E = 32 (one head of 32), depth 4, out_layers
// [0, 1, 2, 3], pos grid 4×4, features 8, out_channels [4, 8, 8, 8].
// The widths of a SyntheticModel. The defaults are the small model above; `full_size(...)` gives the published DA2
// ones (S / B / L) with weights drawn like the official modules' own initialisation (the ViT's linears ~0.02,
// LayerScale 1, the head's convs PyTorch's default ±1/√fan_in), for benchmarks and precision studies at full size.
struct SyntheticDims {
  int64_t embed = 32, depth = 4, heads = 1, grid = 4, features = 8;
  std::vector<int32_t> out_channels{4, 8, 8, 8}, out_layers{0, 1, 2, 3};
  bool official_init = false;

  // variant: 's', 'b' or 'l' (DA2 ViT-S / B / L, pos-embed grid 37); throws InvalidArgument otherwise.
  static SyntheticDims full_size(char variant);
};

class SyntheticModel {
 public:
  explicit SyntheticModel(bool da3_mono = false, unsigned seed = 7);
  SyntheticModel(const SyntheticDims& dims, bool da3_mono, unsigned seed = 7);

  // Metadata edits (full keys come from names::key(suffix)).
  void set_u32(const std::string& suffix, uint32_t v);
  void set_f32(const std::string& suffix, float v);
  void set_string(const std::string& suffix, const std::string& v);
  void set_i32_array(const std::string& suffix, const std::vector<int32_t>& v);
  void remove_key(const std::string& suffix);
  // Tensor edits.
  void remove_tensor(const std::string& name);
  void reshape_tensor(const std::string& name, const Shape& shape);  // new random values
  void fill_tensor(const std::string& name, float value);            // every value `value`, same shape
  bool has_tensor(const std::string& name) const { return tensors_.count(name) != 0; }

  std::shared_ptr<const ModelFile> build(const std::string& path = "synthetic.gguf") const;

  static constexpr int64_t kEmbed = 32, kDepth = 4, kGrid = 4, kFeatures = 8;

 private:
  void add(const std::string& name, const Shape& shape, float scale, float offset = 0.f);
  void add_backbone();
  void add_head(bool sky);

  SyntheticDims dims_;
  std::map<std::string, MetaValue> meta_;
  std::map<std::string, std::pair<Shape, std::vector<float>>> tensors_;
  unsigned seed_;
};

}  // namespace dacpp::testing
