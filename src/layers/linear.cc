#include "layers/linear.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <utility>

#include "core/thread_pool.h"
#include "ops/linear.h"

namespace dacpp::layers {

Linear::Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias,
               WeightPrecision precision)
    : in_(in), out_(out), precision_(precision) {
  load(mf, prefix, bias);
}

Linear::Linear(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, Bias bias,
               const Tensor& row_scale)
    : in_(in), out_(out), precision_(WeightPrecision::Model), rows_scaled_(row_scale.defined()) {
  if (!rows_scaled_) {
    load(mf, prefix, bias);
    return;
  }
  DACPP_CHECK(row_scale.device().is_cpu() && row_scale.dtype() == DType::F32 && row_scale.numel() == out,
              ErrorCode::Internal, "linear '", prefix, "': a row scale must be a host f32 [", out, "], got '",
              row_scale.name(), "' ", shape_str(row_scale.shape()));
  const float* s = row_scale.data<float>();
  // Finite scales and weights (checked at load) can still multiply past f32's range: the product is checked too.
  const auto scaled = [&](const Tensor& t, int64_t cols) {
    Tensor r = Tensor::empty(t.shape(), DType::F32, t.name());
    const float* src = t.data<float>();
    float* dst = r.data<float>();
    std::atomic<bool> overflow{false};
    ThreadPool().parallel_for(out, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(cols, 1)),
                              [&](int64_t r0, int64_t r1) {
                                bool inf = false;
                                for (int64_t i = r0; i < r1; ++i)
                                  for (int64_t j = 0; j < cols; ++j) {
                                    dst[i * cols + j] = s[i] * src[i * cols + j];
                                    inf |= !std::isfinite(dst[i * cols + j]);
                                  }
                                if (inf) overflow.store(true, std::memory_order_relaxed);
                              });
    DACPP_CHECK(!overflow.load(), ErrorCode::InvalidModel, "tensor '", t.name(), "' scaled by '", row_scale.name(),
                "' (its LayerScale, folded at load) overflows f32");
    return r;
  };
  const Tensor host_b = fetch_bias_host(mf, prefix, out, bias);
  if (host_b.defined()) {
    const Tensor sb = scaled(host_b.reshape({out, 1}), 1).reshape({out});
    b_ = mf.placement() != nullptr ? mf.placement()->place(sb, /*keep_f32=*/true) : sb;
  }
  const Tensor host_w = mf.host_f32(weight_name(prefix), {out, in});
  place_weight(mf, scaled(host_w, in));
  mf.release_pages(host_w);
}

void Linear::load(const ModelFile& mf, const std::string& prefix, Bias bias) {
  b_ = fetch_bias(mf, prefix, out_, bias);
  if (precision_ == WeightPrecision::Model && mf.placement() != nullptr && mf.placement()->on_host())
    return place_weight(mf, mf.host_f32(weight_name(prefix), {out_, in_}));
  w_ = ops::LinearWeight(precision_ == WeightPrecision::F32 ? fetch_keep_f32(mf, weight_name(prefix), {out_, in_})
                                                            : fetch(mf, weight_name(prefix), {out_, in_}));
}

void Linear::place_weight(const ModelFile& mf, const Tensor& host) {
  const WeightPlacement* placement = mf.placement();
  // A CPU model in bf16 (the host placement): the weight rounded to bf16 straight into the layout oneDNN's matmul
  // reads, from its f32 pages, which are then given back; no plain bf16 copy is made.
  if (placement != nullptr && placement->on_host()) {
    if (std::optional<ops::LinearWeight> packed = ops::pack_linear_weight(host, DType::BF16)) {
      w_ = std::move(*packed);
      mf.release_pages(host);
      return;
    }
  }
  const Tensor placed = placement != nullptr ? placement->place(host, /*keep_f32=*/false) : host;
  if (placed.raw() != host.raw()) mf.release_pages(host);
  w_ = ops::LinearWeight(placed);
}

Tensor Linear::forward(Exec& ex, const Tensor& x, ops::Activation act) const {
  // x: [..., in] → y: [..., out]
  Shape s = x.shape();
  DACPP_CHECK(!s.empty(), ErrorCode::InvalidArgument, "linear '", w_.name(), "': input '", x.name(),
              "' is a scalar");
  s.back() = out_;
  Tensor y = precision_ == WeightPrecision::F32 ? ex.alloc_f32(s, "linear.out") : ex.alloc(s, "linear.out");
  forward_into(ex, x, y, act);
  return y;
}

void Linear::forward_into(Exec& ex, const Tensor& x, Tensor& y, ops::Activation act) const {
  DACPP_CHECK(!rows_scaled_, ErrorCode::Internal, "linear '", w_.name(),
              "': its rows are scaled at load (a folded LayerScale); only add_into applies");
  ops::linear(ex.ctx, x, w_, b_, y, act);
}

void Linear::add_into(Exec& ex, const Tensor& x, Tensor& stream) const {
  ops::linear_add(ex.ctx, x, w_, b_, stream);
}

}  // namespace dacpp::layers
