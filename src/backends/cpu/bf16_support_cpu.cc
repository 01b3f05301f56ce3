// bf16_support: whether oneDNN can run this backend's bf16 products on this CPU, asked of oneDNN itself (primitive
// descriptors made, nothing executed) so that a model loaded in bf16 is refused at load rather than failing at its
// first forward.
#include <exception>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dnnl_util.h"

namespace dacpp::cpu {
namespace {

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

Bf16Support probe() {
  Bf16Support s;
  try {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    s.isa = isa_name(isa);
    s.native = isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const dnnl::memory::desc a({64, 64}, dt::bf16, tag::ab), b({64, 64}, dt::bf16, tag::ba),
        c({64, 64}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc mm(dnnl::matmul::desc(a, b, c), eng);
    const auto any = [](const dims& d, dt t) { return dnnl::memory::desc(d, t, tag::any); };
    dnnl::convolution_forward::primitive_desc conv(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        any({1, 64, 8, 8}, dt::bf16), any({64, 64, 3, 3}, dt::bf16),
                                        any({1, 64, 8, 8}, dt::f32), {1, 1}, {1, 1}, {1, 1}),
        eng);
  } catch (const dnnl::error& e) {
    s.refusal = str_cat("oneDNN has no bf16 kernels for this CPU (instruction set ", s.isa.empty() ? "?" : s.isa,
                        "; bf16 needs at least AVX-512): ", e.what());
  } catch (const std::exception& e) {
    s.refusal = str_cat("probing oneDNN for bf16 failed: ", e.what());
  }
  return s;
}

}  // namespace

const Bf16Support& bf16_support() {
  static const Bf16Support s = probe();
  return s;
}

}  // namespace dacpp::cpu
