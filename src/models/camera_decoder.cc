#include "models/camera_decoder.h"

#include <algorithm>
#include <cmath>

#include "formats/tensor_names.h"
#include "ops/transfer.h"

namespace dacpp::models {
namespace {

constexpr int64_t kEncoding = 9;

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
    : bb0_(mf, names::cam("bb0"), dim, dim),
      bb2_(mf, names::cam("bb2"), dim, dim),
      fc_t_(mf, names::cam("fc_t"), dim, 3),
      fc_q_(mf, names::cam("fc_q"), dim, 4),
      fc_fov_(mf, names::cam("fc_fov"), dim, 2) {}

Tensor CameraDecoder::forward(RunState& rs, const Tensor& tokens) const {
  // tokens: [S, D] → [S, 9] = [t | q | fov]
  layers::Exec& ex = rs.ex;
  DACPP_CHECK(tokens.rank() == 2 && tokens.dim(1) == bb0_.in_features(), ErrorCode::InvalidArgument,
              "camera decoder: tokens '", tokens.name(), "' have shape ", shape_str(tokens.shape()), ", expected [S, ",
              bb0_.in_features(), "]");
  const int64_t s = tokens.dim(0);
  Tensor enc = Tensor::empty({s, kEncoding}, DType::F32, "pose_enc");
  layers::ArenaScope scope(ex.arena);
  Tensor h = bb0_.forward(ex, tokens, ops::Activation::Relu);
  h = bb2_.forward(ex, h, ops::Activation::Relu);
  // The three heads' outputs are a few floats per view: copied to the host (f32) and interleaved there.
  const Tensor t = ops::to_host_f32(ex.ctx, fc_t_.forward(ex, h));
  const Tensor q = ops::to_host_f32(ex.ctx, fc_q_.forward(ex, h));
  const Tensor fov = ops::to_host_f32(ex.ctx, fc_fov_.forward(ex, h, ops::Activation::Relu));
  float* e = enc.data<float>();
  for (int64_t v = 0; v < s; ++v) {
    std::copy_n(t.data<float>() + v * 3, 3, e + v * kEncoding);
    std::copy_n(q.data<float>() + v * 4, 4, e + v * kEncoding + 3);
    std::copy_n(fov.data<float>() + v * 2, 2, e + v * kEncoding + 7);
  }
  return enc;
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
