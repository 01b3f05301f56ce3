// Shared execution of the convolution-like primitives (convolution, deconvolution): the primitive is created with
// format "any" so oneDNN picks its fastest (blocked) layouts; the user's plain tensors are reordered into scratch
// buffers around it when those layouts differ. Reorder primitives are planned once with the op's primitive.
#pragma once

#include <optional>

#include "backends/cpu/cpu_context.h"
#include "backends/cpu/dnnl_util.h"

namespace dacpp::cpu {

struct ConvPlan : Plan {
  dnnl::primitive prim;
  dnnl::memory::desc src_user, wei_user, dst_user, bias;
  dnnl::memory::desc src, wei, dst;  // the primitive's chosen layouts
  std::optional<dnnl::reorder> src_in, wei_in, dst_out;
};

// The memory a primitive reads for one operand: the caller's bytes as `user` describes them, or, when `r` is set, a
// copy in `chosen` (another layout or dtype) made by `r` into scratch `slot`. Call inside dnnl_call().
dnnl::memory staged_operand(CpuContext& c, const std::optional<dnnl::reorder>& r, const dnnl::memory::desc& user,
                            const dnnl::memory::desc& chosen, const void* data, Scratch slot);

// Fills the reorders of `p` from its user and chosen descriptors (call after p.prim/src/wei/dst are set).
void plan_conv_reorders(CpuContext& c, ConvPlan& p);

// Completes `p` (user descriptors and bias already set) from a convolution's primitive descriptor: its chosen
// layouts, the primitive, the reorders.
void finish_conv_plan(CpuContext& c, ConvPlan& p, const dnnl::convolution_forward::primitive_desc& pd);

// Attributes with a ReLU post-op when `relu`, else none.
dnnl::primitive_attr relu_attr(bool relu);

// Runs `p` on host pointers (bias may be null when the plan has none). Call inside dnnl_call().
void run_conv_plan(CpuContext& c, const ConvPlan& p, const void* x, const void* w, const void* bias, void* y);

}  // namespace dacpp::cpu
