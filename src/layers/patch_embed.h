// PatchEmbed: a ViT's patch embedding, torch nn.Conv2d(in, out, kernel_size=k, stride=k) with no padding, run as one
// GEMM over gathered patch rows. Weight "<prefix>.weight" [out, in, k, k], bias "<prefix>.bias" [out].
#pragma once

#include <string>

#include "formats/model_file.h"
#include "layers/exec.h"

namespace dacpp::layers {

class PatchEmbed {
 public:
  // The weight is read once at load and kept only as rows [out, Kp]: Kp = in·k·k rounded up to a multiple of 8 (DA2
  // / DA3's 3·14·14 = 588 → 592), zero-padded, so that on CUDA each GEMM row is a 16-byte multiple in bf16
  // (cuBLASLt's aligned kernels, no pass that pitches the rows). InvalidModel for a missing or misshapen tensor.
  PatchEmbed(const ModelFile& mf, const std::string& prefix, int64_t in, int64_t out, int kernel);

  // x [N, in, H, W] (H, W positive multiples of the kernel) → a new [N, (H/k)·(W/k), out] activation of
  // channels-last tokens: the patches gathered as rows (ops::patch_rows) times the weight rows in one linear, the
  // same sums as the NCHW conv followed by a permute to tokens. InvalidArgument for any other input shape.
  Tensor forward(Exec& ex, const Tensor& x) const;

  int64_t out_channels() const { return out_; }

 private:
  std::string name_;  // the weight's name, for errors
  int64_t in_ = 0, out_ = 0;
  int kernel_ = 1;
  Tensor rows_, b_;  // rows_ [out, Kp]; b_ [out]
};

}  // namespace dacpp::layers
