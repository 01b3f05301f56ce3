// Conv2d: torch nn.Conv2d (groups 1, square kernel k, stride s, padding p). Weight "<prefix>.weight"
// [out, in, k, k], bias "<prefix>.bias" [out] per `bias`.
#pragma once

#include <string>

#include "formats/model_file.h"
#include "layers/exec.h"
#include "layers/weights.h"
#include "ops/conv2d.h"

namespace dacpp::layers {

struct ConvSpec {
  int64_t in = 0, out = 0;
  int kernel = 1, stride = 1, pad = 0;
  Bias bias = Bias::Required;
};

class Conv2d {
 public:
  Conv2d(const ModelFile& mf, const std::string& prefix, const ConvSpec& spec);

  // x: [N, in, H, W] → a new [N, out, OH, OW] activation (OH = (H + 2p − k) / s + 1).
  Tensor forward(Exec& ex, const Tensor& x, ops::Activation act = ops::Activation::None) const;
  // Same into a preallocated y (must not alias x).
  void forward_into(Exec& ex, const Tensor& x, Tensor& y, ops::Activation act = ops::Activation::None) const;
  // A 1×1, stride-1, unpadded conv applied to channels-last tokens [B, gh·gw, in], giving the map [B, out, gh, gw]
  // (a new activation): the linear with the conv's weight viewed [out, in], then the permute to planes (moving out
  // channels instead of in). The same sums as forward() on the permuted tokens; on a GPU the GEMM is the encoder's
  // layout (K contiguous in both operands), which cuBLASLt ran 3-5× faster than the NCHW 1×1 conv's (pixels
  // contiguous) on DA2's 37² reassemble projections. InvalidArgument for any other conv or token shape.
  Tensor forward_tokens(Exec& ex, const Tensor& tokens, int64_t gh, int64_t gw) const;
  // The same 1×1 conv on tokens [B, P, in] left channels-last: a new [B, P, out] activation (the linear alone), for
  // a consumer that reads tokens (ConvTranspose2d::forward_tokens). InvalidArgument for any other conv.
  Tensor forward_token_rows(Exec& ex, const Tensor& tokens) const;

  int64_t in_channels() const { return spec_.in; }
  int64_t out_channels() const { return spec_.out; }
  const Tensor& weight() const { return w_; }
  const Tensor& bias() const { return b_; }  // undefined for Bias::None

 private:
  ConvSpec spec_;
  Tensor w_, b_;
};

// ConvTranspose2d: torch nn.ConvTranspose2d with kernel == stride, padding 0 (the DPT resize layers).
// Weight "<prefix>.weight" [in, out, k, k] (torch ConvTranspose layout), bias [out].
class ConvTranspose2d {
 public:
  ConvTranspose2d(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, int kernel);

  // x: [N, in, H, W] → a new [N, out, H·k, W·k] activation.
  Tensor forward(Exec& ex, const Tensor& x) const;
  // x: channels-last tokens [N, gh·gw, in] of a gh × gw map → the same [N, out, gh·k, gw·k] (no permute to planes).
  Tensor forward_tokens(Exec& ex, const Tensor& x, int64_t gh, int64_t gw) const;
  // Whether forward_tokens is the faster way here: on CUDA with at least 256 input channels. Measured on the H200
  // (docs/PERFORMANCE.md, version 1.18): DA2-L's stages 0-1 (256 / 512 channels) gain, DA2-B's (96 / 192) do not,
  // DA2-S's (48 / 96) lose, their planes GEMMs being small. The CPU keeps the planes path (not measured there).
  bool prefers_tokens(const ops::Context& ctx) const;

 private:
  int64_t in_, out_;
  int kernel_;
  Tensor w_, b_;
};

}  // namespace dacpp::layers
