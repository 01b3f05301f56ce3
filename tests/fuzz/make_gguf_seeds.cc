// Writes the GGUF seed corpus for fuzz_gguf with dacpp's own writer (built by DACPP_FUZZ=ON as fuzz_make_seeds):
//   kinds.gguf   every metadata type and every tensor dtype, a few values each
//   tiny.gguf    the metadata of a real model file plus its tensors under 2 KB (keeps the seed < 100 KB)
// Usage: fuzz_make_seeds <out_dir> <model.gguf>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "formats/gguf_reader.h"
#include "formats/gguf_writer.h"
#include "formats/quantize.h"

namespace {

void write_kinds(const std::string& path) {
  dacpp::GgufWriter w;
  w.add_string("general.architecture", "depthanything3");
  w.add_u32("depthanything3.vit.depth", 2);
  w.add_i32("depthanything3.vit.alt_start", -1);
  w.add_f32("depthanything3.vit.ln_eps", 1e-6f);
  w.add_bool("depthanything3.vit.cat_token", false);
  w.add_i32_array("depthanything3.vit.out_layers", {0, 1, 2, 3});
  w.add_f32_array("depthanything3.img.mean", {0.485f, 0.456f, 0.406f});
  w.add_string_array("tokens", {"a", "bc"});
  std::vector<float> v(256);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17) * 0.25f - 2.f;
  w.add_tensor("f32", dacpp::DType::F32, {4, 8}, v.data(), 32 * sizeof(float));
  for (dacpp::DType dt : {dacpp::DType::F16, dacpp::DType::BF16, dacpp::DType::Q8_0, dacpp::DType::Q4_K,
                          dacpp::DType::Q5_K, dacpp::DType::Q6_K}) {
    std::vector<uint8_t> q(dacpp::dtype_nbytes(dt, 256));
    dacpp::quantize_row(dt, v.data(), q.data(), 256);
    w.add_tensor(dacpp::dtype_name(dt), dt, {1, 256}, q.data(), q.size());
  }
  w.write(path);
}

void write_tiny(const std::string& path, const std::string& model) {
  auto mf = dacpp::read_gguf(model);
  dacpp::GgufWriter w;
  w.add_string("general.architecture", mf->get_string("general.architecture"));
  for (const auto& kv : mf->metadata()) {
    const dacpp::MetaValue& m = kv.second;
    if (kv.first == "general.architecture") continue;
    switch (m.type) {
      case dacpp::MetaType::String: w.add_string(kv.first, m.s); break;
      case dacpp::MetaType::F32: w.add_f32(kv.first, static_cast<float>(m.f)); break;
      case dacpp::MetaType::Bool: w.add_bool(kv.first, m.i != 0); break;
      case dacpp::MetaType::U32: w.add_u32(kv.first, static_cast<uint32_t>(m.i)); break;
      case dacpp::MetaType::I32: w.add_i32(kv.first, static_cast<int32_t>(m.i)); break;
      case dacpp::MetaType::Array:
        if (!m.af.empty()) w.add_f32_array(kv.first, std::vector<float>(m.af.begin(), m.af.end()));
        else if (!m.ai.empty()) w.add_i32_array(kv.first, std::vector<int32_t>(m.ai.begin(), m.ai.end()));
        else if (!m.as.empty()) w.add_string_array(kv.first, m.as);
        break;
      default: break;
    }
  }
  for (const dacpp::TensorRecord& r : mf->records())
    if (r.nbytes <= 2048) w.add_tensor(r.name, r.dtype, r.shape, r.data, r.nbytes);
  w.write(path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_seeds <out_dir> <model.gguf>\n");
    return 2;
  }
  try {
    write_kinds(std::string(argv[1]) + "/kinds.gguf");
    write_tiny(std::string(argv[1]) + "/tiny.gguf", argv[2]);
  } catch (const dacpp::Error& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
