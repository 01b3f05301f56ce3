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

namespace {

// The bias of `prefix` per `policy` (undefined when there is none), read by `get`.
template <typename Get>
Tensor bias_by_policy(const ModelFile& mf, const std::string& prefix, Bias policy, const Get& get) {
  const std::string name = bias_name(prefix);
  switch (policy) {
    case Bias::None:
      return Tensor();
    case Bias::IfPresent:
      return mf.has_tensor(name) ? get(name) : Tensor();
    case Bias::Required:
      return get(name);
  }
  return Tensor();
}

}  // namespace

Tensor fetch_bias(const ModelFile& mf, const std::string& prefix, int64_t n, Bias policy) {
  return bias_by_policy(mf, prefix, policy, [&](const std::string& name) { return mf.tensor_f32(name, {n}); });
}

Tensor fetch_bias_host(const ModelFile& mf, const std::string& prefix, int64_t n, Bias policy) {
  return bias_by_policy(mf, prefix, policy, [&](const std::string& name) { return mf.host_f32(name, {n}); });
}

}  // namespace dacpp::layers
