// Linear: y = act(x · Wᵀ + b), torch nn.Linear. Weight "<prefix>.weight" [out, in], bias "<prefix>.bias" [out].
#pragma once

#include <string>

#include "formats/model_file.h"
#include "layers/exec.h"
#include "layers/weights.h"
#include "ops/linear.h"

namespace dacpp::layers {

// Whether a layer's weight takes the model's precision (Model) or stays f32 on any device (F32; its inputs and
// outputs are then f32 activations).
enum class WeightPrecision { Model, F32 };

class Linear {
 public:
  // Fetches and shape-checks the weight and (per `bias`) the bias. Throws InvalidModel naming the tensor.
  Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias = Bias::Required,
         WeightPrecision precision = WeightPrecision::Model);
  // A linear for add_into whose output rows are scaled at load by `row_scale` (host f32 [out]; undefined: none): a
  // transformer block's LayerScale folded into its branch's last linear, W' = diag(s)·W and b' = s ⊙ b, so that the
  // residual update x + s ⊙ (h·Wᵀ + b) is one product added to x. Such a linear has only add_into.
  Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias, const Tensor& row_scale);

  // x: [..., in] → a new [..., out] activation from the arena (f32 for a WeightPrecision::F32 layer).
  Tensor forward(Exec& ex, const Tensor& x, ops::Activation act = ops::Activation::None) const;
  // Same, into a preallocated y: [..., out] (must not alias x).
  void forward_into(Exec& ex, const Tensor& x, Tensor& y, ops::Activation act = ops::Activation::None) const;
  // stream [..., out] (f32) ← stream + x · Wᵀ + b, with W and b as loaded (row-scaled or not): ops::linear_add.
  void add_into(Exec& ex, const Tensor& x, Tensor& stream) const;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  // A bf16 model on the CPU packs it for oneDNN's matmul at load (ops::pack_linear_weight).
  const ops::LinearWeight& weight() const { return w_; }
  const Tensor& bias() const { return b_; }

 private:
  // The weight and bias as stored, per precision_ and the placement.
  void load(const ModelFile& mf, const std::string& prefix, Bias bias);
  // The weight as the model's precision and placement want it: packed for the CPU's matmul (bf16 on the host
  // placement) or placed; `host` f32 [out, in], its mapped pages given back when a copy was made.
  void place_weight(const ModelFile& mf, const Tensor& host);

  int64_t in_, out_;
  WeightPrecision precision_;
  bool rows_scaled_ = false;  // W and b folded with a row scale: add_into only
  ops::LinearWeight w_;
  Tensor b_;
};

}  // namespace dacpp::layers
