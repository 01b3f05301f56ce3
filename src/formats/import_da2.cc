// DA2 official checkpoints (DepthAnything/Depth-Anything-V2 `depth_anything_v2/dpt.py`): keys `pretrained.*` (the
// DINOv2 backbone) and `depth_head.*` (DPTHead). spec/models.md §1d, §4.10.
#include "formats/import_internal.h"
#include "formats/tensor_names.h"

namespace dacpp::import_detail {

std::vector<int32_t> da2_out_layers(const SourceIndex& src, int64_t depth) {
  switch (depth) {
    case 12: return {2, 5, 8, 11};
    case 24: return {4, 11, 17, 23};
    case 40: return {9, 19, 29, 39};
    default:
      src.fail("no out_layers rule for a backbone of depth " + std::to_string(depth) + " (expected 12, 24 or 40)");
  }
}

void write_common_meta(ModelBuilder& b, const std::string& arch, const std::string& name) {
  b.set_string(names::kGeneralArchitecture, names::kArchitecture);
  b.set_string(names::key("arch"), arch);
  b.set_string(names::key("checkpoint_name"), name);
  b.set_u32(names::key("patch_size"), 14);
}

void write_img_meta(ModelBuilder& b, bool da3) {
  b.set_f32_array(names::key("img.mean"), {0.485f, 0.456f, 0.406f});
  b.set_f32_array(names::key("img.std"), {0.229f, 0.224f, 0.225f});
  b.set_string(names::key("img.resize_mode"), da3 ? "upper_bound" : "lower_bound");
  b.set_u32(names::key("img.resize_target"), da3 ? 504 : 518);
}

void import_da2(SourceIndex& src, const ImportOptions& opt, float max_depth, ModelBuilder& b) {
  const VitDims vd = infer_vit(src, "pretrained.");
  VitSpec vs;
  vs.src = "pretrained.";
  vs.out = "vit";
  vs.init_values = 1.0f;
  vs.out_layers = da2_out_layers(src, vd.depth);
  src.ignore("pretrained.mask_token");  // DINOv2's masked-training token, unused at inference
  map_vit(src, vs, vd, b);

  HeadSpec hs;
  hs.src = "depth_head.";
  hs.out = "head";
  hs.dim_in = vd.embed;
  hs.rn4_rc1 = true;
  const HeadDims hd = infer_head(src, hs);
  map_head(src, hs, hd, b);
  src.check_all_used();

  write_common_meta(b, names::kArchDA2, opt.name);
  write_vit_meta(b, names::key, vs, vd);
  write_img_meta(b, /*da3=*/false);
  b.set_u32(names::key("head.features"), static_cast<uint32_t>(hd.features));
  b.set_i32_array(names::key("head.out_channels"), hd.out_channels);
  b.set_u32(names::key("head.output_dim"), static_cast<uint32_t>(hd.out_dim));
  b.set_bool(names::key("head.pos_embed"), false);
  b.set_u32(names::key("head.down_ratio"), 1);
  b.set_string(names::key("head.activation"), max_depth > 0 ? "sigmoid" : "relu");
  b.set_string(names::key("head.norm_type"), "idt");
  if (max_depth > 0) b.set_f32(names::key("head.max_depth"), max_depth);
}

}  // namespace dacpp::import_detail
