// DA2 transformers checkpoints (`DepthAnythingForDepthEstimation`, the `-hf` repos) renamed back to the official
// keys; the renames invert transformers' convert_depth_anything_to_hf.py (spec/models.md §4.10), and the split
// query/key/value projections are concatenated into `attn.qkv` (rows q, k, v).
#include <array>
#include <cstring>
#include <map>
#include <regex>

#include "core/error.h"
#include "formats/import_internal.h"

namespace dacpp::import_detail {
namespace {

struct Rule {
  std::regex from;
  std::string to;  // std::regex_replace format
};

std::vector<Rule> rename_rules() {
  const std::vector<std::pair<const char*, const char*>> r = {
      {R"(^backbone\.embeddings\.cls_token$)", "pretrained.cls_token"},
      {R"(^backbone\.embeddings\.mask_token$)", "pretrained.mask_token"},
      {R"(^backbone\.embeddings\.position_embeddings$)", "pretrained.pos_embed"},
      {R"(^backbone\.embeddings\.patch_embeddings\.projection\.(weight|bias)$)", "pretrained.patch_embed.proj.$1"},
      {R"(^backbone\.encoder\.layer\.(\d+)\.layer_scale([12])\.lambda1$)", "pretrained.blocks.$1.ls$2.gamma"},
      {R"(^backbone\.encoder\.layer\.(\d+)\.(norm[12]|mlp\.fc[12])\.(weight|bias)$)", "pretrained.blocks.$1.$2.$3"},
      {R"(^backbone\.encoder\.layer\.(\d+)\.attention\.output\.dense\.(weight|bias)$)", "pretrained.blocks.$1.attn.proj.$2"},
      {R"(^backbone\.layernorm\.(weight|bias)$)", "pretrained.norm.$1"},
      {R"(^neck\.reassemble_stage\.layers\.(\d)\.projection\.(weight|bias)$)", "depth_head.projects.$1.$2"},
      {R"(^neck\.reassemble_stage\.layers\.(\d)\.resize\.(weight|bias)$)", "depth_head.resize_layers.$1.$2"},
      {R"(^head\.conv1\.(weight|bias)$)", "depth_head.scratch.output_conv1.$1"},
      {R"(^head\.conv2\.(weight|bias)$)", "depth_head.scratch.output_conv2.0.$1"},
      {R"(^head\.conv3\.(weight|bias)$)", "depth_head.scratch.output_conv2.2.$1"},
  };
  std::vector<Rule> rules;
  for (const auto& [f, t] : r) rules.push_back({std::regex(f), t});
  return rules;
}

// neck.convs.{n} → scratch.layer{n+1}_rn; neck.fusion_stage.layers.{j} → refinenet{4-j}.
std::string rename_neck(const std::string& name) {
  std::smatch m;
  if (std::regex_match(name, m, std::regex(R"(^neck\.convs\.(\d)\.weight$)")))
    return "depth_head.scratch.layer" + std::to_string(std::stoi(m[1]) + 1) + "_rn.weight";
  if (std::regex_match(name, m, std::regex(R"(^neck\.fusion_stage\.layers\.([0-3])\.(.*)$)"))) {
    const std::string block = "depth_head.scratch.refinenet" + std::to_string(4 - std::stoi(m[1])) + ".";
    std::smatch r;
    const std::string rest = m[2];
    if (std::regex_match(rest, r, std::regex(R"(^residual_layer([12])\.convolution([12])\.(weight|bias)$)")))
      return block + "resConfUnit" + std::string(r[1]) + ".conv" + std::string(r[2]) + "." + std::string(r[3]);
    if (std::regex_match(rest, r, std::regex(R"(^projection\.(weight|bias)$)"))) return block + "out_conv." + std::string(r[1]);
  }
  return {};
}

// Concatenates q, k, v (each [E, E] or [E]) along dim 0 into one new record.
TensorRecord concat_qkv(const std::string& path, const std::string& name, const std::array<const TensorRecord*, 3>& parts,
                        TensorBuffers& buffers) {
  const char* which[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; ++i) {
    if (!parts[i]) {
      // name = "pretrained.blocks.<n>.attn.qkv.<leaf>"
      const size_t b = std::strlen("pretrained.blocks."), e = name.find('.', b);
      DACPP_THROW(ErrorCode::InvalidModel, "checkpoint '", path, "': required parameter 'backbone.encoder.layer.",
                  name.substr(b, e - b), ".attention.attention.", which[i], name.substr(name.rfind('.')),
                  "' is missing");
    }
    if (parts[i]->shape != parts[0]->shape || parts[i]->dtype != parts[0]->dtype || parts[i]->shape.empty())
      DACPP_THROW(ErrorCode::InvalidModel, "checkpoint '", path, "': the query/key/value parts of '", name,
                  "' differ in shape or dtype");
  }
  Shape shape = parts[0]->shape;
  shape[0] *= 3;
  const size_t n = parts[0]->nbytes;
  uint8_t* dst = buffers.alloc(3 * n, name);
  for (int i = 0; i < 3; ++i)
    if (n) std::memcpy(dst + i * n, parts[i]->data, n);
  return TensorRecord{name, parts[0]->dtype, shape, dst, 3 * n};
}

}  // namespace

CheckpointTensors da2_hf_to_official(const CheckpointTensors& hf, TensorBuffers& buffers) {
  const std::vector<Rule> rules = rename_rules();
  const std::regex qkv(R"(^backbone\.encoder\.layer\.(\d+)\.attention\.attention\.(query|key|value)\.(weight|bias)$)");
  CheckpointTensors out;
  out.path = hf.path;
  out.file_bytes = hf.file_bytes;
  out.keepalive = hf.keepalive;
  std::map<std::string, std::array<const TensorRecord*, 3>> groups;
  for (const TensorRecord& r : hf.tensors) {
    std::smatch m;
    if (std::regex_match(r.name, m, qkv)) {
      const std::string name = "pretrained.blocks." + std::string(m[1]) + ".attn.qkv." + std::string(m[3]);
      const int part = m[2] == "query" ? 0 : m[2] == "key" ? 1 : 2;
      groups[name][static_cast<size_t>(part)] = &r;
      continue;
    }
    std::string renamed = rename_neck(r.name);
    for (size_t i = 0; renamed.empty() && i < rules.size(); ++i)
      if (std::regex_match(r.name, rules[i].from)) renamed = std::regex_replace(r.name, rules[i].from, rules[i].to);
    TensorRecord copy = r;
    if (!renamed.empty()) copy.name = renamed;  // unknown keys keep their name and are reported as unmapped
    out.tensors.push_back(copy);
  }
  for (auto& [name, parts] : groups) out.tensors.push_back(concat_qkv(hf.path, name, parts, buffers));
  return out;
}

}  // namespace dacpp::import_detail
