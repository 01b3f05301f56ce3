#include "layers/patch_embed.h"

#include <algorithm>

#include "layers/weights.h"
#include "ops/conv2d.h"
#include "ops/linear.h"

namespace dacpp::layers {

PatchEmbed::PatchEmbed(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, int kernel)
    : name_(weight_name(prefix)),
      in_(in),
      out_(out),
      kernel_(kernel),
      b_(fetch_bias(mf, prefix, out, Bias::Required)) {
  const int64_t cols = in * kernel * kernel, kp = (cols + 7) / 8 * 8;
  const Tensor host = mf.host_f32(name_, {out, in, kernel, kernel});
  Tensor rows = Tensor::empty({out, kp}, DType::F32, name_ + " (patch rows)");
  for (int64_t o = 0; o < out; ++o) {
    const float* src = host.data<float>() + o * cols;
    float* dst = rows.data<float>() + o * kp;
    std::copy_n(src, cols, dst);
    std::fill(dst + cols, dst + kp, 0.f);
  }
  rows_ = mf.placement() != nullptr ? mf.placement()->place(rows, /*keep_f32=*/false) : rows;
  mf.release_pages(host);  // the rows are a copy: the mapped weight is not read again
}

Tensor PatchEmbed::forward(Exec& ex, const Tensor& x) const {
  const int64_t k = kernel_;
  DACPP_CHECK(x.rank() == 4 && x.dim(1) == in_ && x.dim(2) > 0 && x.dim(3) > 0 && x.dim(2) % k == 0 &&
                  x.dim(3) % k == 0,
              ErrorCode::InvalidArgument, "patch embedding '", name_, "': input '", x.name(), "' has shape ",
              shape_str(x.shape()), ", expected [N, ", in_, ", H, W] with H and W positive multiples of ", k);
  const int64_t n = x.dim(0), patches = (x.dim(2) / k) * (x.dim(3) / k);
  Tensor y = ex.alloc({n, patches, out_}, "patch_embed.tokens");
  ArenaScope scope(ex.arena);
  Tensor rows = ex.alloc({n, patches, rows_.dim(1)}, "patch_embed.rows");
  ops::patch_rows(ex.ctx, x, kernel_, rows);
  ops::linear(ex.ctx, rows, rows_, b_, y);
  return y;
}

}  // namespace dacpp::layers
