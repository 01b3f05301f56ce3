// DPT head mapping (spec/gguf-compat.md §1.3 "DPT / DualDPT main path", aux head, GSDPT), shared by the DA2
// DPTHead, the DA3 DPT (mono/metric), the DA3 DualDPT (any-view) and the GSDPT.
#include "formats/import_internal.h"
#include "formats/tensor_names.h"

namespace dacpp::import_detail {
namespace {

// One conv (weight [oc, ic, k, k] + bias [oc]) from `from` to `to`.
void conv(SourceIndex& src, ModelBuilder& b, const std::string& from, const std::string& to, int64_t oc,
          int64_t ic, int64_t k, bool bias = true) {
  b.tensor(to + ".weight", src.take(from + ".weight", {oc, ic, k, k}));
  if (bias) b.tensor(to + ".bias", src.take(from + ".bias", {oc}));
}

// scratch.refinenet{i}[_aux] → <out>.scratch.rn{i}[_aux].
void fusion_block(SourceIndex& src, const HeadSpec& s, int level, bool aux, bool rc1, int64_t f, ModelBuilder& b) {
  const std::string from = s.src + "scratch.refinenet" + std::to_string(level) + (aux ? "_aux." : ".");
  for (int u = rc1 ? 1 : 2; u <= 2; ++u)
    for (int c = 1; c <= 2; ++c)
      conv(src, b, from + "resConfUnit" + std::to_string(u) + ".conv" + std::to_string(c),
           names::head_rn(s.out, level, aux, "rc" + std::to_string(u) + ".c" + std::to_string(c)), f, f, 3);
  conv(src, b, from + "out_conv", names::head_rn(s.out, level, aux, "out"), f, f, 1);
}

// DualDPT aux head: the four aux fusion blocks and the finest level's output convs; coarse levels are ignored.
void aux_head(SourceIndex& src, const HeadSpec& s, const HeadDims& d, ModelBuilder& b) {
  const int64_t f = d.features, h = f / 2;
  for (int level = 1; level <= 4; ++level) fusion_block(src, s, level, true, level < 4, f, b);
  const int finest = 3;
  const std::string c1 = s.src + "scratch.output_conv1_aux." + std::to_string(finest) + ".";
  const int64_t chans[6] = {f, h, f, h, f, h};
  for (int k = 0; k < 5; ++k)
    conv(src, b, c1 + std::to_string(k), names::head(s.out, "scratch.out1_aux." + std::to_string(k)), chans[k + 1],
         chans[k], 3);
  const std::string c2 = s.src + "scratch.output_conv2_aux." + std::to_string(finest) + ".";
  const Shape& a = src.shape(c2 + "0.weight");
  const int64_t hidden = a.empty() ? 0 : a[0];
  conv(src, b, c2 + "0", names::head(s.out, "scratch.out2a_aux"), hidden, h, 3);
  b.tensor(names::head(s.out, "scratch.out2_aux_ln.weight"), src.take(c2 + "2.weight", {hidden}));
  b.tensor(names::head(s.out, "scratch.out2_aux_ln.bias"), src.take(c2 + "2.bias", {hidden}));
  const Shape& o = src.shape(c2 + "5.weight");
  conv(src, b, c2 + "5", names::head(s.out, "scratch.out2b_aux"), o.empty() ? 0 : o[0], hidden, 1);
  for (int level = 0; level < finest; ++level) {
    src.ignore_prefix(s.src + "scratch.output_conv1_aux." + std::to_string(level) + ".");
    src.ignore_prefix(s.src + "scratch.output_conv2_aux." + std::to_string(level) + ".");
  }
}

}  // namespace

HeadDims infer_head(const SourceIndex& src, const HeadSpec& s) {
  HeadDims d;
  for (int i = 0; i < 4; ++i) {
    const std::string name = s.src + "projects." + std::to_string(i) + ".weight";
    const Shape& p = src.shape(name);
    if (p.size() != 4 || p[1] != s.dim_in)
      src.fail("parameter '" + name + "' has shape " + shape_str(p) + ", expected [oc, " + std::to_string(s.dim_in) +
               ", 1, 1]");
    d.out_channels.push_back(static_cast<int32_t>(p[0]));
  }
  const Shape& rn = src.shape(s.src + "scratch.layer1_rn.weight");
  if (rn.size() != 4 || rn[0] < 2) src.fail("parameter '" + s.src + "scratch.layer1_rn.weight' has shape " + shape_str(rn));
  d.features = rn[0];
  const Shape& o2a = src.shape(s.src + "scratch.output_conv2.0.weight");
  const Shape& o2b = src.shape(s.src + "scratch.output_conv2.2.weight");
  if (o2a.size() != 4 || o2b.size() != 4)
    src.fail("parameters '" + s.src + "scratch.output_conv2.{0,2}.weight' are not 4-D conv weights");
  d.hidden = o2a[0];
  d.out_dim = o2b[0];
  return d;
}

void map_head(SourceIndex& src, const HeadSpec& s, const HeadDims& d, ModelBuilder& b) {
  const int64_t f = d.features;
  const auto& oc = d.out_channels;
  if (s.norm) {
    b.tensor(names::head(s.out, "norm.weight"), src.take(s.src + "norm.weight", {s.dim_in}));
    b.tensor(names::head(s.out, "norm.bias"), src.take(s.src + "norm.bias", {s.dim_in}));
  }
  for (int i = 0; i < 4; ++i)
    conv(src, b, s.src + "projects." + std::to_string(i), names::head(s.out, "proj." + std::to_string(i)), oc[i],
         s.dim_in, 1);
  const int64_t kernel[4] = {4, 2, 0, 3};
  for (int i : {0, 1, 3})
    conv(src, b, s.src + "resize_layers." + std::to_string(i), names::head(s.out, "resize." + std::to_string(i)),
         oc[i], oc[i], kernel[i]);
  for (int i = 1; i <= 4; ++i)
    conv(src, b, s.src + "scratch.layer" + std::to_string(i) + "_rn",
         names::head(s.out, "scratch.layer" + std::to_string(i) + "_rn"), f, oc[i - 1], 3, /*bias=*/false);
  for (int level = 1; level <= 4; ++level) fusion_block(src, s, level, false, level < 4 || s.rn4_rc1, f, b);
  conv(src, b, s.src + "scratch.output_conv1", names::head(s.out, "scratch.out1"), f / 2, f, 3);
  conv(src, b, s.src + "scratch.output_conv2.0", names::head(s.out, "scratch.out2a"), d.hidden, f / 2, 3);
  conv(src, b, s.src + "scratch.output_conv2.2", names::head(s.out, "scratch.out2b"), d.out_dim, d.hidden, 1);
  if (s.sky) {
    conv(src, b, s.src + "scratch.sky_output_conv2.0", names::head(s.out, "scratch.sky_out2a"), d.hidden, f / 2, 3);
    conv(src, b, s.src + "scratch.sky_output_conv2.2", names::head(s.out, "scratch.sky_out2b"), 1, d.hidden, 1);
  }
  if (s.aux && s.keep_aux) aux_head(src, s, d, b);
  if (s.aux && !s.keep_aux) {
    for (int level = 1; level <= 4; ++level)
      src.ignore_prefix(s.src + "scratch.refinenet" + std::to_string(level) + "_aux.");
    src.ignore_prefix(s.src + "scratch.output_conv1_aux.");
    src.ignore_prefix(s.src + "scratch.output_conv2_aux.");
  }
  if (s.merger) {
    const int64_t ch[4] = {3, 32, 64, 128};
    for (int k = 0; k < 3; ++k)
      conv(src, b, s.src + "images_merger." + std::to_string(2 * k), names::head(s.out, "merger." + std::to_string(k)),
           ch[k + 1], ch[k], 3);
  }
}

}  // namespace dacpp::import_detail
