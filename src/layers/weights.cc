#include "layers/weights.h"

namespace dacpp::layers {

std::string weight_name(const std::string& prefix) { return prefix + ".weight"; }
std::string bias_name(const std::string& prefix) { return prefix + ".bias"; }

Tensor fetch(const ModelFile& mf, const std::string& name, const Shape& expected) {
  return mf.tensor_f32(name, expected);
}

Tensor fetch_keep_f32(const ModelFile& mf, const std::string& name, const Shape& expected) {
  return mf.device_f32(name, expected);
}

Tensor fetch_bias(const ModelFile& mf, const std::string& prefix, int64_t n, Bias policy) {
  const std::string name = bias_name(prefix);
  switch (policy) {
    case Bias::None:
      return Tensor();
    case Bias::IfPresent:
      if (!mf.has_tensor(name)) return Tensor();
      return mf.tensor_f32(name, {n});
    case Bias::Required:
      return mf.tensor_f32(name, {n});
  }
  return Tensor();
}

}  // namespace dacpp::layers
