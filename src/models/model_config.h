// ModelConfig: the architecture of one model file, parsed from its GGUF metadata keys (shared/spec/gguf-compat.md
// §1.2) and tensor presence (§1.4), and validated at load. Every problem is an InvalidModel error naming the key
// (or tensor) and its value; a config that parses describes a network the engine can build.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "formats/model_file.h"
#include "layers/dinov2_block.h"

namespace dacpp::models {

// The model version; one class per version (models/model_factory.h).
enum class ModelKind {
  Da2,         // DA2 relative or metric: DINOv2 + DPTHead (depth_anything_v2/dpt.py)
  Da3Mono,     // DA3MONO-LARGE / DA3METRIC-LARGE: DINOv2 + DPT with sky head (model/dpt.py)
  Da3AnyView,  // DA3 S/B/L/G: alternating attention + DualDPT + cam_dec
  Da3Nested,   // DA3NESTED: any-view giant + metric large, aligned to metres (models/da3_nested_model.h)
};
const char* model_kind_name(ModelKind k);

enum class ResizeMode { UpperBound, LowerBound };

struct VitConfig {
  int64_t embed_dim = 0, depth = 0, num_heads = 0, head_dim = 0;
  int64_t ffn_hidden = 0;  // from the fc1 / w12 tensor shape
  layers::FfnKind ffn = layers::FfnKind::Mlp;
  int patch_size = 14;
  int pos_embed_grid = 37;   // M: pos_embed has 1 + M² rows
  int alt_start = -1, rope_start = -1, qknorm_start = -1;
  float rope_freq = 100.f;
  bool cat_token = false;
  float ln_eps = 1e-6f;          // blocks
  float final_norm_eps = 1e-6f;  // backbone `norm`: 1e-6 DA2, 1e-5 DA3 (a plain nn.LayerNorm upstream)
  float interpolate_offset = 0.1f;
  std::array<int, 4> out_layers{};
};

struct HeadConfig {
  int64_t features = 0;
  std::array<int64_t, 4> out_channels{};
  int64_t output_dim = 1;  // channels of out2b
  bool has_norm = false;   // head.norm (DualDPT / GS)
  bool has_sky = false;    // sky_out2a / sky_out2b (DA3 mono / metric)
  bool pos_embed = false;  // UV position embedding (DualDPT)
  bool has_aux = false;    // DualDPT aux (ray) head: head.scratch.rn1_aux.out.weight present (--with-aux import)
  float max_depth = 0.f;   // DA2 metric: sigmoid · max_depth when > 0
};

struct ImageConfig {
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  ResizeMode resize_mode = ResizeMode::UpperBound;
  int resize_target = 504;
};

// What a loaded model can produce (reported by `dacpp info`, checked by the CLI before running).
struct ModelCapabilities {
  bool conf = false;       // per-pixel depth confidence (DA3 any-view)
  bool pose = false;       // camera extrinsics + intrinsics (DA3 any-view with cam_dec)
  bool sky = false;        // sky score (DA3 mono/metric)
  bool rays = false;       // ray map (DA3 any-view imported with the aux head)
  bool metric = false;     // depth in metres (DA2 metric) or focal-normalised metres (DA3 metric)
  bool multiview = false;  // one cross-view pass over several images (DA3 any-view)
};

struct ModelConfig {
  std::string arch;             // "depthanything2" / "depthanything3"
  std::string checkpoint_name;  // may be empty
  ModelKind kind = ModelKind::Da2;
  bool metric = false;  // DA2 metric (max_depth > 0) or DA3METRIC (checkpoint name)
  VitConfig vit;
  HeadConfig head;
  ImageConfig img;
  bool has_camera_decoder = false;  // any cam.* tensor present (DA3 any-view pose head; then all are required)

  ModelCapabilities capabilities() const;

  // Parses and validates, including that the ViT blocks are uniform (an optional tensor such as a bias or LayerScale
  // in some block must be in all). Throws InvalidModel naming the key/tensor and value; Unsupported for the metric
  // branch of a nested model alone. Unsupported for a well-formed model version this build does not implement yet is
  // *not* raised here (the factory does).
  static ModelConfig from_file(const ModelFile& mf);
};

}  // namespace dacpp::models
