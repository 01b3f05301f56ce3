#include "backends/cpu/conv_plan.h"

namespace dacpp::cpu {
namespace {

std::optional<dnnl::reorder> reorder_between(CpuContext& c, const dnnl::memory::desc& from,
                                             const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(c.engine(), from, c.engine(), to));
}

}  // namespace

dnnl::memory staged_operand(CpuContext& c, const std::optional<dnnl::reorder>& r, const dnnl::memory::desc& user,
                            const dnnl::memory::desc& chosen, const void* data, Scratch slot) {
  dnnl::memory um = wrap(user, c.engine(), data);
  if (!r) return um;
  dnnl::memory cm(chosen, c.engine(), c.scratch(slot, chosen.get_size()));
  r->execute(c.stream(), um, cm);
  return cm;
}

void plan_conv_reorders(CpuContext& c, ConvPlan& p) {
  p.src_in = reorder_between(c, p.src_user, p.src);
  p.wei_in = reorder_between(c, p.wei_user, p.wei);
  p.dst_out = reorder_between(c, p.dst, p.dst_user);
}

void finish_conv_plan(CpuContext& c, ConvPlan& p, const dnnl::convolution_forward::primitive_desc& pd) {
  p.src = pd.src_desc();
  p.wei = pd.weights_desc();
  p.dst = pd.dst_desc();
  p.prim = dnnl::convolution_forward(pd);
  plan_conv_reorders(c, p);
}

dnnl::primitive_attr relu_attr(bool relu) {
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  return attr;
}

void run_conv_plan(CpuContext& c, const ConvPlan& p, const void* x, const void* w, const void* bias, void* y) {
  dnnl::memory src = staged_operand(c, p.src_in, p.src_user, p.src, x, Scratch::Src);
  dnnl::memory wei = staged_operand(c, p.wei_in, p.wei_user, p.wei, w, Scratch::Weights);
  dnnl::memory user_dst = wrap(p.dst_user, c.engine(), y);
  dnnl::memory dst = p.dst_out ? dnnl::memory(p.dst, c.engine(), c.scratch(Scratch::Dst, p.dst.get_size()))
                               : user_dst;
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  if (bias) args[DNNL_ARG_BIAS] = wrap(p.bias, c.engine(), bias);
  p.prim.execute(c.stream(), args);
  if (p.dst_out) p.dst_out->execute(c.stream(), dst, user_dst);
  c.stream().wait();
}

}  // namespace dacpp::cpu
