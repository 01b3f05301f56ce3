// Weight fetching for layers: every tensor is looked up by name and shape-checked when the layer is built
// (design.md §4.3), so a model that loads can run. Names are "<prefix>.weight" / "<prefix>.bias", where the
// prefix comes from formats/tensor_names.h.
#pragma once

#include <string>

#include "core/tensor.h"
#include "formats/model_file.h"

namespace dacpp::layers {

// Whether a layer's bias tensor must exist (Required), is used when present (IfPresent, gguf-compat §1.4), or
// does not exist (None: a conv declared bias=False upstream).
enum class Bias { Required, IfPresent, None };

// "<prefix>.weight", "<prefix>.bias".
std::string weight_name(const std::string& prefix);
std::string bias_name(const std::string& prefix);

// The named tensor as host f32 with shape `expected`. Throws InvalidModel naming the tensor when it is missing
// or has another shape.
Tensor fetch(const ModelFile& mf, const std::string& name, const Shape& expected);

// Same as fetch, but placed on the model's device in f32 whatever the model's precision (layers upstream runs in
// fp32 under autocast, e.g. DA3's camera decoder).
Tensor fetch_keep_f32(const ModelFile& mf, const std::string& name, const Shape& expected);

// The bias of layer `prefix` with shape [n] per `policy`; an undefined Tensor when there is none. Throws
// InvalidModel when Required and missing, or when present with a wrong shape.
Tensor fetch_bias(const ModelFile& mf, const std::string& prefix, int64_t n, Bias policy);
// Same, as host f32 whatever the placement (a bias the layer transforms before placing it).
Tensor fetch_bias_host(const ModelFile& mf, const std::string& prefix, int64_t n, Bias policy);

}  // namespace dacpp::layers
