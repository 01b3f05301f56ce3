// ResizeConvFold: a DPT reassemble stage's transposed conv (kernel = stride = S, no padding: resize_layers[0 / 1])
// and the 3×3 conv after it (scratch.layer{1,2}_rn: stride 1, padding 1, no bias) as one linear operator on the
// stage's token grid. Nothing non-linear lies between them, and an output pixel (S·i + a, S·j + b) of the S× map
// reads the transposed conv's outputs in a 3×3 window, which come from token rows i − 1 .. i + 1 (a = 0 reads rows
// i − 1 and i, 0 < a < S − 1 row i alone, a = S − 1 rows i and i + 1) and likewise columns. So per output row phase a
// the stage is an im2col of the tokens over those kernel rows (ops::im2col3x3_tokens, the transposed conv's bias as
// a constant input channel: exact at the border, where the 3×3 conv's zero padding drops it) and one GEMM to the
// phase's S·F outputs; one permute puts the S phases into the map. DA2-L stage 0 (S = 4, 256 → 256 → 256): 13.3
// GFLOP in four GEMMs against 2.9 + 25.8 for the two convs, and no S× intermediate map.
//
// The folded weights, per phase a: W_a[(b, f), (ky, kx, c)] = Σ over the 3×3 taps (dy, dx) landing on token
// (i + ky − 1, j + kx − 1) of Σ_m conv[f, m, dy, dx] · convT[c, m, (a + dy − 1) mod S, (b + dx − 1) mod S] (for c = Cin
// the transposed conv's bias in place of convT[c, m, ·]), computed at load in f32 by one matmul over the middle
// channels, then placed like any weight (the activation dtype on a GPU).
#pragma once

#include <string>
#include <vector>

#include "formats/model_file.h"
#include "layers/exec.h"

namespace dacpp::layers {

class ResizeConvFold {
 public:
  // resize_prefix: the transposed conv ("<p>.weight" [cin, cmid, s, s], "<p>.bias" [cmid]); conv_prefix: the 3×3
  // conv ("<p>.weight" [f, cmid, 3, 3]). s >= 2. `cpu`: a CPU context for the fold's matmul (one per model load
  // serves every fold). Throws InvalidModel (shapes, values) as the plain layers would.
  ResizeConvFold(const ModelFile& mf, ops::Context& cpu, const std::string& resize_prefix,
                 const std::string& conv_prefix, int64_t cin, int64_t cmid, int64_t f, int s);

  // tokens: channels-last [N, gh·gw, cin] → y [N, f, s·gh, s·gw] (preallocated; must not alias tokens): the same
  // as the 3×3 conv of the transposed conv of the tokens as a map, up to rounding.
  void forward_into(Exec& ex, const Tensor& tokens, int64_t gh, int64_t gw, Tensor& y) const;

  int scale() const { return s_; }

 private:
  struct Phase {
    int ky0 = 0, kyn = 0;  // the 3×3 kernel rows this output row phase reads
    Tensor w;              // [s·f, kyn·3·cp]
  };
  int64_t cin_, cp_, f_;
  int s_;
  std::vector<Phase> phases_;
};

}  // namespace dacpp::layers
