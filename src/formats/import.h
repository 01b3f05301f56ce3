// Checkpoint import: official Depth Anything checkpoints → a ModelFile in the depth-anything.cpp GGUF layout
// (shared/spec/gguf-compat.md §1), converted in memory, without Python.
//
// Accepted sources (shared/spec/models.md §1d):
//   - DA2 official `.pth` (torch.save state dict, keys `pretrained.*`, `depth_head.*`);
//   - a DA2 transformers `-hf` folder (model.safetensors + config.json; q/k/v are concatenated back into qkv);
//   - a DA3 folder (model.safetensors + config.json with `model_name`; keys `model.*`): any-view S/B/L/G
//     (with cam_dec, and the GS head for giant), mono/metric large, and nested giant+metric (both branches in
//     one index, or one per call: ImportOptions::nested_part);
//   - a bare `.safetensors` file of either family (detected from its keys; a DA3 file without config.json is
//     classified by the presence of `camera_token`).
// Every tensor is stored as f32 with its torch-order shape; names, metadata keys and types follow the spec.
// Every source parameter is mapped or explicitly ignored (DA2 mask_token, the unused coarse levels of the DualDPT aux
// head, and the whole aux head unless `with_aux`). DA3 cam_enc (pose conditioning, not implemented) is not converted
// but is validated like a mapped parameter: present, its exact shape, a float dtype, finite values.
//
// Errors (Error{InvalidModel} unless noted), all naming the checkpoint path:
//   an unmapped parameter, a missing required parameter, a parameter of the wrong shape, a cam_enc parameter of an
//   integer dtype or holding NaN/Inf, an unknown model_name or a depth without an out_layers rule, a corrupt file
//   (from the readers); NotFound for a missing path or file.
#pragma once

#include <memory>
#include <string>

#include "formats/model_file.h"

namespace dacpp {

struct ImportOptions {
  // DA2 metric models: the output scale in metres (20 Hypersim, 80 VKITTI). 0 = take it from the HF config or the
  // file name ("hypersim" → 20, "vkitti" → 80), else the model is relative.
  float max_depth = 0;
  // `depthanything3.checkpoint_name`; empty = the file stem or folder name.
  std::string name;
  // DA3 any-view: also emit the DualDPT aux (ray) head, finest level only (depth-anything.cpp's --with-aux).
  bool with_aux = false;
  // DA3 nested checkpoints hold two networks. Both (the default, for loading): one ModelFile with the any-view
  // giant under vit / head / cam and the metric branch under m_vit / m_head (formats/nested_model_file.h; a
  // ModelKind::Da3Nested model). AnyView / Metric: one network, as depth-anything.cpp's converter writes two files:
  // the any-view giant (checkpoint_name "<name>-anyview") or the metric branch under m_vit / m_head
  // ("<name>-metric"). Ignored for other checkpoints.
  enum class NestedPart { Both, AnyView, Metric };
  NestedPart nested_part = NestedPart::Both;
  // Legacy spelling of nested_part = Metric (true wins over nested_part).
  bool nested_metric = false;
};

std::shared_ptr<const ModelFile> import_checkpoint(const std::string& path, const ImportOptions& opt = {});

// Writes `m` as GGUF (general.architecture first, then the other keys, then the tensors in record order).
// Throws Io (from the writer) naming the path.
void write_gguf(const ModelFile& m, const std::string& out_path);

}  // namespace dacpp
