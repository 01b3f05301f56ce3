// oneDNN helpers for the CPU backend's .cc files: error translation and descriptor shorthands.
// Every oneDNN call goes through dnnl_call(), which turns dnnl::error into Error{Backend} naming the op, the
// oneDNN status and oneDNN's own message.
#pragma once

#include <dnnl.hpp>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "core/error.h"
#include "core/tensor.h"

namespace dacpp::cpu {

// "<op>: oneDNN <status> <what>".
[[noreturn]] void throw_dnnl_error(const char* op, const dnnl::error& e);

template <typename F>
auto dnnl_call(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    throw_dnnl_error(op, e);
  } catch (const std::bad_alloc&) {
    DACPP_THROW(ErrorCode::OutOfMemory, op, ": oneDNN ran out of host memory");
  }
}

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

// The bit pattern of a float, for exact plan keys.
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// A plain f32 descriptor with explicit strides.
inline dnnl::memory::desc f32_desc(const dims& d, const dims& strides) {
  return dnnl::memory::desc(d, dt::f32, strides);
}
inline dnnl::memory::desc f32_desc(const dims& d, tag t) { return dnnl::memory::desc(d, dt::f32, t); }

// A oneDNN memory over a host pointer that oneDNN only reads (oneDNN's API takes void*).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& eng, const void* p) {
  return dnnl::memory(md, eng, const_cast<void*>(p));
}

}  // namespace dacpp::cpu
