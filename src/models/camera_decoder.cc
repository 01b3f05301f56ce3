#include "models/camera_decoder.h"

#include <algorithm>
#include <cmath>

#include "formats/tensor_names.h"
#include "ops/copy.h"
#include "ops/permute.h"
#include "ops/transfer.h"

namespace dacpp::models {
namespace {

constexpr int64_t kEncoding = 9;
constexpr layers::WeightPrecision kF32 = layers::WeightPrecision::F32;

// quat_to_mat (xyzw, scalar last): divides by |q|², so q need not be unit.
void quat_to_mat(const float* q, float r[9]) {
  const float i = q[0], j = q[1], k = q[2], w = q[3];
  const float two_s = 2.0f / (i * i + j * j + k * k + w * w);
  r[0] = 1 - two_s * (j * j + k * k);
  r[1] = two_s * (i * j - k * w);
  r[2] = two_s * (i * k + j * w);
  r[3] = two_s * (i * j + k * w);
  r[4] = 1 - two_s * (i * i + k * k);
  r[5] = two_s * (j * k - i * w);
  r[6] = two_s * (i * k - j * w);
  r[7] = two_s * (j * k + i * w);
  r[8] = 1 - two_s * (i * i + j * j);
}

}  // namespace

CameraDecoder::CameraDecoder(const ModelFile& mf, int64_t dim)
    : bb0_(mf, names::cam("bb0"), dim, dim, layers::Bias::Required, kF32),
      bb2_(mf, names::cam("bb2"), dim, dim, layers::Bias::Required, kF32),
      fc_t_(mf, names::cam("fc_t"), dim, 3, layers::Bias::Required, kF32),
      fc_q_(mf, names::cam("fc_q"), dim, 4, layers::Bias::Required, kF32),
      fc_fov_(mf, names::cam("fc_fov"), dim, 2, layers::Bias::Required, kF32) {}

Tensor CameraDecoder::forward(RunState& rs, const Tensor& tokens) const {
  // tokens: [S, D] → rows [9, S] = [t | q | fov]ᵀ
  layers::Exec& ex = rs.ex;
  DACPP_CHECK(tokens.rank() == 2 && tokens.dim(1) == bb0_.in_features(), ErrorCode::InvalidArgument,
              "camera decoder: tokens '", tokens.name(), "' have shape ", shape_str(tokens.shape()), ", expected [S, ",
              bb0_.in_features(), "]");
  const int64_t s = tokens.dim(0);
  Tensor rows = ex.alloc_f32({kEncoding, s}, "pose_enc.rows");
  layers::ArenaScope scope(ex.arena);
  Tensor x = tokens;
  if (x.dtype() != DType::F32) {  // a bf16 / f16 model: the decoder still runs in f32, as upstream's
    x = ex.alloc_f32(tokens.shape(), "cam_dec.tokens.f32");
    ops::cast(ex.ctx, tokens, x);
  }
  Tensor h = bb0_.forward(ex, x, ops::Activation::Relu);
  h = bb2_.forward(ex, h, ops::Activation::Relu);
  // The three heads' [S, k] outputs transposed into rows [0, 3), [3, 7), [7, 9) of the encoding.
  const Tensor parts[] = {fc_t_.forward(ex, h), fc_q_.forward(ex, h), fc_fov_.forward(ex, h, ops::Activation::Relu)};
  int64_t row = 0;
  for (const Tensor& part : parts) {
    Tensor dst = rows.reshape({kEncoding * s}).offset_view(row * s, {part.dim(1), s});
    ops::permute(ex.ctx, part, {1, 0}, dst);
    row += part.dim(1);
  }
  return rows;
}

void finish_cameras(ops::Context& ctx, ModelOutputs& out, Tensor* enc_out) {
  if (!out.pose_enc.defined()) return;
  const Tensor rows = ops::to_host_f32(ctx, out.pose_enc);  // [9, S]
  const int64_t s = rows.dim(1);
  Tensor enc = Tensor::empty({s, kEncoding}, DType::F32, "pose_enc");
  for (int64_t v = 0; v < s; ++v)
    for (int64_t k = 0; k < kEncoding; ++k) enc.data<float>()[v * kEncoding + k] = rows.data<float>()[k * s + v];
  pose_encoding_to_cameras(enc, out.pose_h, out.pose_w, out.extrinsics, out.intrinsics);
  out.pose_enc = Tensor();
  if (enc_out) *enc_out = enc;
}

void pose_encoding_to_cameras(const Tensor& enc, int64_t height, int64_t width, Tensor& extrinsics,
                              Tensor& intrinsics) {
  DACPP_CHECK(enc.rank() == 2 && enc.dim(1) == kEncoding, ErrorCode::Internal, "pose encoding has shape ",
              shape_str(enc.shape()), ", expected [S, 9]");
  const int64_t s = enc.dim(0);
  extrinsics = Tensor::zeros({s, 3, 4}, DType::F32, "extrinsics");
  intrinsics = Tensor::zeros({s, 3, 3}, DType::F32, "intrinsics");
  const float hh = static_cast<float>(height) / 2.0f, hw = static_cast<float>(width) / 2.0f;
  for (int64_t v = 0; v < s; ++v) {
    const float* p = enc.data<float>() + v * kEncoding;
    float r[9];
    quat_to_mat(p + 3, r);
    float* x = extrinsics.data<float>() + v * 12;
    for (int a = 0; a < 3; ++a) {  // w2c = [Rᵀ | −Rᵀ·t]
      float tr = 0;
      for (int b = 0; b < 3; ++b) {
        x[a * 4 + b] = r[b * 3 + a];
        tr += r[b * 3 + a] * p[b];
      }
      x[a * 4 + 3] = -tr;
    }
    float* k = intrinsics.data<float>() + v * 9;
    k[0] = hw / std::max(std::tan(p[8] / 2.0f), 1e-6f);
    k[4] = hh / std::max(std::tan(p[7] / 2.0f), 1e-6f);
    k[2] = hw;
    k[5] = hh;
    k[8] = 1.0f;
  }
}

}  // namespace dacpp::models
