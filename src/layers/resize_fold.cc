#include "layers/resize_fold.h"

#include <algorithm>
#include <cmath>

#include "layers/weights.h"
#include "ops/conv2d.h"
#include "ops/linear.h"
#include "ops/permute.h"

namespace dacpp::layers {
namespace {

// floor(v / s) for v in [-1, s]: the token row (or column) offset of transposed-conv output row i·s + v.
int token_offset(int v, int s) {
  return v < 0 ? -1 : v / s;
}

}  // namespace

ResizeConvFold::ResizeConvFold(const ModelFile& mf, ops::Context& cpu, const std::string& resize_prefix,
                               const std::string& conv_prefix, int64_t cin, int64_t cmid, int64_t f, int s)
    : cin_(cin), cp_((cin + 1 + 7) / 8 * 8), f_(f), s_(s) {
  DACPP_CHECK(cin > 0 && cmid > 0 && f > 0 && s >= 2 && cpu.device().is_cpu(), ErrorCode::Internal, "resize fold '",
              conv_prefix, "': channels ", cin, " / ", cmid, " / ", f, ", scale ", s);
  const Tensor wt = mf.host_f32(weight_name(resize_prefix), {cin, cmid, s, s});
  const Tensor bt = mf.host_f32(bias_name(resize_prefix), {cmid});
  const Tensor w3 = mf.host_f32(weight_name(conv_prefix), {f, cmid, 3, 3});
  // r[(f, dy, dx), (c, a', b')] = Σ_m w3[f, m, dy, dx] · wt[c, m, a', b'], row c = cin the transposed conv's bias:
  // one matmul over the middle channels (2.4 G multiply-adds for DA2-L's stage 0).
  Tensor w3r = Tensor::empty({f, 3, 3, cmid}, DType::F32, "resize fold conv");
  ops::permute(cpu, w3, {0, 2, 3, 1}, w3r);
  Tensor wtr = Tensor::empty({cin + 1, s, s, cmid}, DType::F32, "resize fold transposed conv");
  Tensor wtr_main = wtr.slice0(0, cin);
  ops::permute(cpu, wt, {0, 2, 3, 1}, wtr_main);
  float* bias_rows = wtr.slice0(cin, cin + 1).data<float>();
  for (int64_t q = 0; q < int64_t{s} * s; ++q) std::copy_n(bt.data<float>(), cmid, bias_rows + q * cmid);
  Tensor r = Tensor::empty({f * 9, (cin + 1) * s * s}, DType::F32, "resize fold products");
  ops::linear(cpu, w3r.reshape({f * 9, cmid}), wtr.reshape({(cin + 1) * s * s, cmid}), Tensor(), r);
  const float* rp = r.data<float>();
  const int64_t rcols = (cin + 1) * s * s;
  for (int a = 0; a < s; ++a) {
    Phase ph;
    ph.ky0 = token_offset(a - 1, s) + 1;
    ph.kyn = token_offset(a + 1, s) + 1 - ph.ky0 + 1;
    const int64_t k = int64_t{ph.kyn} * 3 * cp_;
    Tensor w = Tensor::zeros({s * f, k}, DType::F32, conv_prefix + ".folded." + std::to_string(a));
    float* wp = w.data<float>();
    for (int b = 0; b < s; ++b)
      for (int64_t fo = 0; fo < f; ++fo) {
        float* row = wp + (b * f + fo) * k;
        for (int dy = 0; dy < 3; ++dy) {
          const int ya = a + dy - 1, si = token_offset(ya, s), ap = ya - s * si;
          for (int dx = 0; dx < 3; ++dx) {
            const int xb = b + dx - 1, sj = token_offset(xb, s), bp = xb - s * sj;
            const float* src = rp + (fo * 9 + dy * 3 + dx) * rcols + ap * s + bp;
            float* dst = row + ((si + 1 - ph.ky0) * 3 + sj + 1) * cp_;
            for (int64_t c = 0; c <= cin; ++c) dst[c] += src[c * s * s];
          }
        }
      }
    for (int64_t i = 0; i < w.numel(); ++i)
      DACPP_CHECK(std::isfinite(wp[i]), ErrorCode::InvalidModel, "resize fold '", conv_prefix,
                  "': the folded weights overflow f32 (weights of '", resize_prefix, "' and '", conv_prefix,
                  "' too large)");
    ph.w = mf.placement() != nullptr ? mf.placement()->place(w, /*keep_f32=*/false) : w;
    phases_.push_back(std::move(ph));
  }
}

void ResizeConvFold::forward_into(Exec& ex, const Tensor& tokens, int64_t gh, int64_t gw, Tensor& y) const {
  DACPP_CHECK(tokens.rank() == 3 && tokens.dim(1) == gh * gw && tokens.dim(2) == cin_, ErrorCode::InvalidArgument,
              "resize fold: tokens '", tokens.name(), "' have shape ", shape_str(tokens.shape()), ", expected [N, ", gh,
              "·", gw, ", ", cin_, "]");
  const int64_t n = tokens.dim(0), m = n * gh * gw;
  DACPP_CHECK(y.shape() == (Shape{n, f_, s_ * gh, s_ * gw}), ErrorCode::InvalidArgument, "resize fold: output '",
              y.name(), "' has shape ", shape_str(y.shape()), ", expected [", n, ", ", f_, ", ", s_ * gh, ", ", s_ * gw,
              "]");
  ArenaScope scope(ex.arena);
  // Each phase's GEMM computes W_a · colsᵀ, pixels innermost, so that the permute into the map (b innermost there,
  // then j) reads runs of consecutive pixels instead of one element per F.
  Tensor d = ex.alloc({s_, s_ * f_, m}, "resize_fold.phases");  // [a][(b, f)][(n, i, j)]
  for (int a = 0; a < s_; ++a) {
    ArenaScope inner(ex.arena);
    const Phase& ph = phases_[static_cast<size_t>(a)];
    Tensor cols = ex.alloc({m, int64_t{ph.kyn} * 3 * cp_}, "resize_fold.im2col");
    ops::im2col3x3_tokens(ex.ctx, tokens, gh, gw, ph.ky0, ph.kyn, /*ones=*/true, cols);
    Tensor da = d.slice0(a, a + 1).reshape({s_ * f_, m});
    ops::linear(ex.ctx, ph.w, cols, Tensor(), da);
  }
  Tensor y6 = y.reshape({n, f_, gh, s_, gw, s_});
  ops::permute(ex.ctx, d.reshape({s_, s_, f_, n, gh, gw}), {3, 2, 4, 0, 5, 1}, y6);
}

}  // namespace dacpp::layers
