#include "layers/self_attention.h"

#include <cmath>

#include "ops/attention.h"
#include "ops/permute.h"

namespace dacpp::layers {

SelfAttention::SelfAttention(const ModelFile& mf, const SelfAttentionNames& names, int64_t dim, int64_t num_heads,
                             const Tensor& out_scale)
    : dim_(dim),
      heads_(num_heads),
      head_dim_(num_heads > 0 ? dim / num_heads : 0),
      qkv_(mf, names.qkv, dim, 3 * dim, Bias::IfPresent),
      proj_(mf, names.proj, dim, dim, Bias::IfPresent, out_scale) {
  DACPP_CHECK(num_heads > 0 && dim % num_heads == 0, ErrorCode::InvalidModel, "attention '", names.qkv,
              "': width ", dim, " is not divisible by ", num_heads, " heads");
  if (!names.q_norm.empty()) q_norm_.emplace(mf, names.q_norm, head_dim_, kQkNormEps);
  if (!names.k_norm.empty()) k_norm_.emplace(mf, names.k_norm, head_dim_, kQkNormEps);
  DACPP_CHECK(q_norm_.has_value() == k_norm_.has_value(), ErrorCode::InvalidModel, "attention '", names.qkv,
              "': q-norm and k-norm must both be present or both absent");
}

Tensor SelfAttention::forward(Exec& ex, const Tensor& x, const Rope2d* rope, const Tensor* positions) const {
  check_input(x);
  Tensor y = ex.alloc({x.dim(0), x.dim(1), dim_}, "attn.out");
  ArenaScope scope(ex.arena);
  proj_.forward_into(ex, heads_out(ex, x, rope, positions), y);
  return y;
}

void SelfAttention::forward_add(Exec& ex, const Tensor& x, Tensor& stream, const Rope2d* rope,
                                const Tensor* positions) const {
  check_input(x);
  ArenaScope scope(ex.arena);
  proj_.add_into(ex, heads_out(ex, x, rope, positions), stream);
}

void SelfAttention::check_input(const Tensor& x) const {
  DACPP_CHECK(x.rank() == 3 && x.dim(2) == dim_, ErrorCode::InvalidArgument, "attention: input '", x.name(),
              "' has shape ", shape_str(x.shape()), ", expected [B, N, ", dim_, "]");
}

Tensor SelfAttention::heads_out(Exec& ex, const Tensor& x, const Rope2d* rope, const Tensor* positions) const {
  // x: [B, N, C] (check_input'ed by the caller) → qkv: [B, N, 3, H, D] → [3, B, H, N, D] → attn: [B, N, H, D],
  // returned as [B, N, C]
  const int64_t b = x.dim(0), n = x.dim(1);
  Tensor o = ex.alloc({b, n, heads_, head_dim_}, "attn.heads_out");
  Tensor qkv = qkv_.forward(ex, x);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  if (!q_norm_ && rope == nullptr) {  // nothing to apply per head: attend straight from the fused projection
    ops::attention_qkv(ex.ctx, qkv, heads_, scale, o);
    return o.reshape({b, n, dim_});
  }
  Tensor heads = ex.alloc({3, b, heads_, n, head_dim_}, "attn.qkv_heads");
  ops::permute(ex.ctx, qkv.reshape({b, n, 3, heads_, head_dim_}), {2, 0, 3, 1, 4}, heads);
  const Shape hs = {b, heads_, n, head_dim_};
  Tensor q = heads.slice0(0, 1).reshape(hs);
  Tensor k = heads.slice0(1, 2).reshape(hs);
  Tensor v = heads.slice0(2, 3).reshape(hs);
  if (q_norm_) {
    q_norm_->forward_into(ex, q, q);
    k_norm_->forward_into(ex, k, k);
  }
  if (rope != nullptr) {
    DACPP_CHECK(positions != nullptr, ErrorCode::Internal, "attention: rope without positions");
    rope->apply(ex, q, *positions);
    rope->apply(ex, k, *positions);
  }
  ops::attention(ex.ctx, q, k, v, scale, o);
  return o.reshape({b, n, dim_});
}

void SelfAttention::qkv_into(Exec& ex, const Tensor& x, Tensor& qkv) const {
  qkv_.forward_into(ex, x, qkv);
}

Tensor SelfAttention::forward_rows(Exec& ex, const Tensor& qkv, int64_t row0, int64_t rows) const {
  check_projection(qkv);
  Tensor y = ex.alloc({qkv.dim(0), rows, dim_}, "attn.out");
  ArenaScope scope(ex.arena);
  proj_.forward_into(ex, heads_out_rows(ex, qkv, row0, rows), y);
  return y;
}

void SelfAttention::forward_rows_add(Exec& ex, const Tensor& qkv, int64_t row0, Tensor& stream) const {
  check_projection(qkv);
  ArenaScope scope(ex.arena);
  proj_.add_into(ex, heads_out_rows(ex, qkv, row0, stream.dim(1)), stream);
}

void SelfAttention::check_projection(const Tensor& qkv) const {
  DACPP_CHECK(!q_norm_, ErrorCode::Internal, "attention: row chunks of a block with qk-norm");
  DACPP_CHECK(qkv.rank() == 3 && qkv.dim(2) == 3 * dim_, ErrorCode::InvalidArgument, "attention: projection '",
              qkv.name(), "' has shape ", shape_str(qkv.shape()), ", expected [B, N, ", 3 * dim_, "]");
}

Tensor SelfAttention::heads_out_rows(Exec& ex, const Tensor& qkv, int64_t row0, int64_t rows) const {
  // qkv: check_projection'ed by the caller
  const int64_t b = qkv.dim(0);
  Tensor o = ex.alloc({b, rows, heads_, head_dim_}, "attn.heads_out");
  ops::attention_qkv_rows(ex.ctx, qkv, heads_, 1.0f / std::sqrt(static_cast<float>(head_dim_)), row0, o);
  return o.reshape({b, rows, dim_});
}

}  // namespace dacpp::layers
