// CameraDecoder: the DA3 any-view pose head (model/cam_dec.py) and the pose-encoding conversion
// (model/utils/transform.py::pose_encoding_to_extri_intri, then affine_inverse), spec/models.md §4.5.
//
// token [S, D] (D = 2E, slot 0 of the last out layer, un-normalised) → Linear(D, D) → ReLU → Linear(D, D) → ReLU →
// fc_t (3), fc_qvec (4, xyzw, not normalised), fc_fov (2, then ReLU) = the 9-d camera-to-world encoding
// [t, q, fov_h, fov_w]. Weights "cam.{bb0, bb2, fc_t, fc_q, fc_fov}.{weight, bias}" (spec/gguf-compat.md §1.3).
#pragma once

#include "formats/model_file.h"
#include "layers/linear.h"
#include "models/depth_model.h"
#include "models/run_state.h"

namespace dacpp::models {

class CameraDecoder {
 public:
  // dim: the camera-token width 2E. Fetches and shape-checks all five layers (InvalidModel naming a missing one).
  CameraDecoder(const ModelFile& mf, int64_t dim);

  // tokens: [S, D] (activations on the device) → the encoding as rows [9, S] (t | q | fov, one column per view)
  // on the same device, in f32: the decoder's weights stay f32 and it runs in f32 whatever the model's precision
  // (upstream runs cam_dec with autocast off). Nothing is copied to the host here, so the forward stays
  // capturable as a CUDA graph; finish_cameras() turns it into cameras afterwards.
  Tensor forward(RunState& rs, const Tensor& tokens) const;

 private:
  layers::Linear bb0_, bb2_, fc_t_, fc_q_, fc_fov_;
};

// enc: [S, 9] host → extrinsics [S, 3, 4] (world-to-camera: inverse of [quat_to_mat(q) | t]) and intrinsics
// [S, 3, 3] (fy = (H/2)/tan(fov_h/2), fx = (W/2)/tan(fov_w/2), tan clamped ≥ 1e-6, cx = W/2, cy = H/2), new
// owning host tensors, computed in f32 as upstream. height/width: the model-input size.
void pose_encoding_to_cameras(const Tensor& enc, int64_t height, int64_t width, Tensor& extrinsics,
                              Tensor& intrinsics);

// out.pose_enc (rows [9, S] from CameraDecoder::forward, any device) → out.extrinsics and out.intrinsics (host f32)
// for the model input size out.pose_h × out.pose_w; pose_enc is consumed. A no-op when pose_enc is undefined.
// `enc_out`, when given, receives the host [S, 9] encoding (stage dumps).
void finish_cameras(ops::Context& ctx, ModelOutputs& out, Tensor* enc_out = nullptr);

}  // namespace dacpp::models
