// upsample_conv_head on the CPU (cpu_ops.h): per image, bands of output rows [r0, r1) upsampled channels-last from
// the rows [r0 − 1, r1 + 1) they need, plus the added map where there is one (Scratch::Stage0), the 3×3 conv with
// bias and ReLU on oneDNN with nhwc source and destination (Scratch::Stage1; oneDNN's brgconv works in that layout,
// so neither side is reordered), then the 1×1 conv to each output channel as a dot product per pixel. A band's top
// and bottom padding is the conv's own only at the image's edges (asymmetric padding, one plan per kind of band), so
// no row is computed twice.
// Against composing resize_bilinear and two conv2d (the CPU's earlier path): no NCHW ↔ nhwc reorder of the
// upsampled band or of the hidden map, and no 1×1 primitive (DA2-S: three reorders per band, ~4 % of a forward).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/conv_plan.h"
#include "backends/cpu/cpu_ops.h"
#include "core/fault.h"
#include "formats/half.h"

namespace dacpp::cpu {
namespace {

// The 3×3 conv of a band: `rows_in` input rows [rows_in, ow, c] → `rows_out` output rows [rows_out, ow, m], padded
// by `pad_top` / `pad_bottom` rows (1 at the image's edges, else 0) and one column each side.
std::shared_ptr<ConvPlan> make_plan(CpuContext& c, int64_t cin, int64_t m, int64_t rows_in, int64_t rows_out,
                                    int64_t ow, int pad_top, int pad_bottom, dt prod, bool has_bias) {
  auto p = std::make_shared<ConvPlan>();
  const dims xd{1, cin, rows_in, ow}, wd{m, cin, 3, 3}, yd{1, m, rows_out, ow};
  p->src_user = dnnl::memory::desc(xd, prod, tag::nhwc);
  p->wei_user = dnnl::memory::desc(wd, prod, tag::oihw);
  p->dst_user = f32_desc(yd, tag::nhwc);
  if (has_bias) p->bias = f32_desc({m}, tag::a);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                    p->src_user, dnnl::memory::desc(wd, prod, tag::any),
                                    has_bias ? p->bias : dnnl::memory::desc(), p->dst_user, dims{1, 1},
                                    dims{pad_top, 1}, dims{pad_bottom, 1});
  finish_conv_plan(c, *p, dnnl::convolution_forward::primitive_desc(d, relu_attr(true), c.engine()));
  return p;
}

// y[i] = b1 + Σ_k hidden[i, k] · w1[k] for `pixels` pixels of m channels each (ReLU after where `relu`). Eight
// partial sums in a fixed order (vectorisable without reassociating), so the result does not depend on threads.
void reduce_channels(const float* hidden, int64_t pixels, int64_t m, const float* w1, float b1, bool relu, float* y) {
  const int64_t m8 = m / 8 * 8;
  for (int64_t i = 0; i < pixels; ++i) {
    const float* __restrict h = hidden + i * m;
    float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = 0; k < m8; k += 8)
      for (int l = 0; l < 8; ++l) part[l] += h[k + l] * w1[k + l];
    float sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
    for (int64_t k = m8; k < m; ++k) sum += h[k] * w1[k];
    const float v = sum + b1;
    y[i] = relu ? std::max(v, 0.f) : v;
  }
}

// t [c, n] → [n, c].
std::vector<float> channels_innermost(const float* t, int64_t c, int64_t n) {
  std::vector<float> out(static_cast<size_t>(c * n));
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i * c + k)] = t[k * n + i];
  return out;
}

}  // namespace

void upsample_conv_head(CpuContext& c, const Tensor& x, const Tensor& w3, const Tensor& b3, const Tensor& w1,
                        const Tensor& b1, Tensor& y, int final, const float* add_cols, const float* add_rows) {
  DACPP_FAULT_POINT("dnnl.call", ErrorCode::Backend, "upsample_conv_head: oneDNN convolution");
  const int64_t n = x.dim(0), cin = x.dim(1), h = x.dim(2), w = x.dim(3), m = w3.dim(0), outs = w1.dim(0);
  const int64_t oh = y.dim(2), ow = y.dim(3);
  if (y.numel() == 0) return;
  c.pool().bind_to_current_thread();
  const bool bf16 = w3.dtype() == DType::BF16;
  const dt prod = bf16 ? dt::bf16 : dt::f32;
  const int64_t es = bf16 ? 2 : 4;
  // The 1×1 weights in f32 (bf16 ones widened: exact), and the added map's tables channels innermost.
  std::vector<float> w1f(static_cast<size_t>(outs * m));
  for (int64_t k = 0; k < outs * m; ++k)
    w1f[static_cast<size_t>(k)] =
        w1.dtype() == DType::BF16 ? bf16_to_f32(static_cast<const uint16_t*>(w1.raw())[k]) : w1.data<float>()[k];
  const bool relu = final == 1;
  const bool add = add_cols != nullptr && add_rows != nullptr;
  const std::vector<float> cols = add ? channels_innermost(add_cols, cin, ow) : std::vector<float>();
  const std::vector<float> rows = add ? channels_innermost(add_rows, cin, oh) : std::vector<float>();

  // A band's upsampled map (f32 size) takes half the context's work limit (8 MiB by default: DA2-S 63 rows of 518).
  const int64_t row_bytes = cin * ow * 4;
  const int64_t band = std::clamp<int64_t>(static_cast<int64_t>(c.work_limit_bytes() / 2) / row_bytes, 1, oh);
  void* up = c.scratch(Scratch::Stage0, static_cast<size_t>((band + 2) * ow * cin * es));
  auto* hidden = static_cast<float*>(c.scratch(Scratch::Stage1, static_cast<size_t>(band * ow * m * 4)));
  const bool has_bias = b3.defined();
  for (int64_t img = 0; img < n; ++img) {
    const float* xi = x.data<float>() + img * cin * h * w;
    for (int64_t r0 = 0; r0 < oh; r0 += band) {
      const int64_t r1 = std::min(oh, r0 + band);
      const int64_t a = std::max<int64_t>(r0 - 1, 0), e = std::min<int64_t>(r1 + 1, oh);
      const int pad_top = r0 == 0 ? 1 : 0, pad_bottom = r1 == oh ? 1 : 0;
      resize_bilinear_rows_nhwc(c, xi, cin, h, w, a, e - a, oh, ow, /*align_corners=*/true, up, bf16,
                                add ? cols.data() : nullptr, add ? rows.data() : nullptr);
      const std::string key = str_cat("upsample_conv_head c", cin, " m", m, " in", e - a, " out", r1 - r0, " w", ow,
                                      " p", pad_top, pad_bottom, " b", has_bias, " ", dtype_name(w3.dtype()));
      dnnl_call("upsample_conv_head", [&] {
        auto p = c.plan<ConvPlan>(
            key, [&] { return make_plan(c, cin, m, e - a, r1 - r0, ow, pad_top, pad_bottom, prod, has_bias); });
        run_conv_plan(c, *p, up, w3.raw(), has_bias ? b3.raw() : nullptr, hidden);
      });
      for (int64_t j = 0; j < outs; ++j) {
        float* yj = y.data<float>() + ((img * outs + j) * oh + r0) * ow;
        const float bias = b1.defined() ? b1.data<float>()[j] : 0.f;
        c.pool().parallel_for((r1 - r0) * ow, /*grain=*/1024, [&](int64_t begin, int64_t end) {
          reduce_channels(hidden + begin * m, end - begin, m, w1f.data() + j * m, bias, relu, yj + begin);
        });
      }
    }
  }
  if (final == 2) unary(c, UnaryKind::Exp, y, y);
}

}  // namespace dacpp::cpu
