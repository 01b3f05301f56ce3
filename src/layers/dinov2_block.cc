#include "layers/dinov2_block.h"

#include <cstdlib>
#include <string>

#include "formats/tensor_names.h"
#include "layers/mlp.h"
#include "layers/swiglu.h"
#include "layers/weights.h"
#include "ops/elementwise.h"

namespace dacpp::layers {
namespace {

SelfAttentionNames attention_names(const std::string& p, int i, bool qk_norm) {
  SelfAttentionNames n;
  n.qkv = names::vit_block(p, i, "attn_qkv");
  n.proj = names::vit_block(p, i, "attn_proj");
  if (qk_norm) {
    n.q_norm = names::vit_block(p, i, "attn_qnorm");
    n.k_norm = names::vit_block(p, i, "attn_knorm");
  }
  return n;
}

// out_scale: the LayerScale folded into the FFN's last linear (InGemm), or undefined.
std::unique_ptr<FeedForward> make_ffn(const ModelFile& mf, const std::string& p, int i, const Dinov2BlockSpec& s,
                                      const Tensor& out_scale) {
  if (s.ffn == FfnKind::SwiGlu)
    return std::make_unique<SwiGlu>(mf, names::vit_block(p, i, "mlp_w12"), names::vit_block(p, i, "mlp_w3"), s.dim,
                                    s.ffn_hidden, out_scale);
  return std::make_unique<Mlp>(mf, names::vit_block(p, i, "mlp_fc1"), names::vit_block(p, i, "mlp_fc2"), s.dim,
                               s.ffn_hidden, out_scale);
}

// A LayerScale gamma [C], placed (host: on the host whatever the placement), or undefined when the file has none.
Tensor optional_gamma(const ModelFile& mf, const std::string& name, int64_t dim, bool host = false) {
  if (!mf.has_tensor(name)) return Tensor();
  return host ? mf.host_f32(name, {dim}) : fetch(mf, name, {dim});
}

bool resolve_in_gemm(ResidualForm form, const ModelFile& mf) {
  if (form != ResidualForm::Auto) return form == ResidualForm::InGemm;
  const char* e = std::getenv("DACPP_RESIDUAL_GEMM");
  if (e != nullptr && (std::string(e) == "0" || std::string(e) == "1")) return std::string(e) == "1";
  return mf.placement() != nullptr && !mf.placement()->on_host();  // a GPU's placement
}

}  // namespace

Dinov2Block::Dinov2Block(const ModelFile& mf, const std::string& p, int i, const Dinov2BlockSpec& s)
    : in_gemm_(resolve_in_gemm(s.residual, mf)),
      norm1_(mf, names::vit_block(p, i, "norm1"), s.dim, s.ln_eps),
      norm2_(mf, names::vit_block(p, i, "norm2"), s.dim, s.ln_eps),
      attn_(mf, attention_names(p, i, s.qk_norm), s.dim, s.num_heads,
            in_gemm_ ? optional_gamma(mf, names::vit_block(p, i, "ls1"), s.dim, /*host=*/true) : Tensor()),
      ffn_(make_ffn(mf, p, i, s,
                    in_gemm_ ? optional_gamma(mf, names::vit_block(p, i, "ls2"), s.dim, /*host=*/true) : Tensor())),
      ls1_(in_gemm_ ? Tensor() : optional_gamma(mf, names::vit_block(p, i, "ls1"), s.dim)),
      ls2_(in_gemm_ ? Tensor() : optional_gamma(mf, names::vit_block(p, i, "ls2"), s.dim)) {}

void Dinov2Block::norm1_into(Exec& ex, const Tensor& x, Tensor& h) const { norm1_.forward_into(ex, x, h); }

void Dinov2Block::forward(Exec& ex, Tensor& x, Tensor& h, const Dinov2Block* next, const Rope2d* rope,
                          const Tensor* positions, const ops::DropLeadingNorm* collect) const {
  // x: [B, N, C], the residual stream (f32 on every device; the branches run in the activation dtype); h: norm1(x)
  ArenaScope scope(ex.arena);
  if (in_gemm_) {
    attn_.forward_add(ex, h, x, rope, positions);
    return finish_added(ex, x, h, next, collect);
  }
  finish(ex, x, attn_.forward(ex, h, rope, positions), h, next, collect);
}

void Dinov2Block::forward_rows(Exec& ex, const Tensor& qkv, int64_t row0, Tensor& x, Tensor& h, const Dinov2Block* next,
                               Tensor* next_qkv, const ops::DropLeadingNorm* collect) const {
  ArenaScope scope(ex.arena);
  if (in_gemm_) {
    attn_.forward_rows_add(ex, qkv, row0, x);
    finish_added(ex, x, h, next, collect);
  } else {
    finish(ex, x, attn_.forward_rows(ex, qkv, row0, x.dim(1)), h, next, collect);
  }
  if (next != nullptr && next_qkv != nullptr) next->qkv_into(ex, h, *next_qkv);
}

void Dinov2Block::finish(Exec& ex, Tensor& x, const Tensor& a, Tensor& h, const Dinov2Block* next,
                         const ops::DropLeadingNorm* collect) const {
  norm2_.add_scaled_forward_into(ex, x, a, ls1_, h);  // x += LayerScale(a) in f32, then h = norm2(x)
  Tensor m = ffn_->forward(ex, h);
  if (next) {
    // x += LayerScale(m), then h = next.norm1(x) (and the collected norm)
    next->norm1_.add_scaled_forward_into(ex, x, m, ls2_, h, collect);
  } else if (collect) {
    Tensor none;
    ops::add_scaled_layer_norm(ex.ctx, x, m, ls2_, Tensor(), Tensor(), 0.f, none, collect);
  } else {
    ops::add_scaled(ex.ctx, x, m, ls2_, x);
  }
}

void Dinov2Block::finish_added(Exec& ex, Tensor& x, Tensor& h, const Dinov2Block* next,
                               const ops::DropLeadingNorm* collect) const {
  norm2_.stream_forward_into(ex, x, h);
  ffn_->forward_add(ex, h, x);
  if (next) {
    next->norm1_.stream_forward_into(ex, x, h, collect);  // h = next.norm1(x) (and the collected norm)
  } else if (collect) {
    Tensor none;
    ops::add_scaled_layer_norm(ex.ctx, x, Tensor(), Tensor(), Tensor(), Tensor(), 0.f, none, collect);
  }
}

}  // namespace dacpp::layers
