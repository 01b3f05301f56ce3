#include "formats/tensor_buffers.h"

#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/tensor.h"
#include "formats/half.h"

namespace dacpp {

uint8_t* TensorBuffers::alloc(size_t bytes, const std::string& what) {
  std::shared_ptr<void> p = host_alloc(bytes, what);
  std::memset(p.get(), 0, bytes);
  held_.push_back(p);
  return static_cast<uint8_t*>(p.get());
}

TensorRecord TensorBuffers::aligned_view(const std::string& name, DType dt, const Shape& shape, const uint8_t* src,
                                         size_t nbytes) {
  TensorRecord r;
  r.name = name;
  r.dtype = dt;
  r.shape = shape;
  r.nbytes = nbytes;
  const size_t align = dtype_block_bytes(dt);
  if (nbytes == 0) {
    r.data = nullptr;
  } else if (reinterpret_cast<uintptr_t>(src) % align != 0) {
    uint8_t* dst = alloc(nbytes, name);
    std::memcpy(dst, src, nbytes);
    r.data = dst;
  } else {
    r.data = src;
  }
  return r;
}

TensorRecord TensorBuffers::i64_to_i32(const std::string& name, const Shape& shape, const uint8_t* src, int64_t n) {
  auto* dst = reinterpret_cast<int32_t*>(alloc(static_cast<size_t>(n) * 4, name));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    std::memcpy(&v, src + i * 8, 8);
    DACPP_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                ErrorCode::InvalidModel, "tensor '", name, "': int64 value ", v, " at index ", i,
                " does not fit in int32");
    dst[i] = static_cast<int32_t>(v);
  }
  return TensorRecord{name, DType::I32, shape, dst, static_cast<size_t>(n) * 4};
}

TensorRecord TensorBuffers::f64_to_f32(const std::string& name, const Shape& shape, const uint8_t* src, int64_t n) {
  auto* dst = reinterpret_cast<float*>(alloc(static_cast<size_t>(n) * 4, name));
  for (int64_t i = 0; i < n; ++i) {
    double v;
    std::memcpy(&v, src + i * 8, 8);
    dst[i] = static_cast<float>(v);
  }
  return TensorRecord{name, DType::F32, shape, dst, static_cast<size_t>(n) * 4};
}

TensorRecord TensorBuffers::to_f32(const TensorRecord& r) {
  if (r.dtype == DType::F32) return r;
  const int64_t n = shape_numel(r.shape);
  auto* dst = reinterpret_cast<float*>(alloc(static_cast<size_t>(n) * 4, r.name));
  const auto* src = static_cast<const uint8_t*>(r.data);
  for (int64_t i = 0; i < n; ++i) {
    if (r.dtype == DType::F16 || r.dtype == DType::BF16) {
      uint16_t b;
      std::memcpy(&b, src + i * 2, 2);
      dst[i] = r.dtype == DType::F16 ? f16_to_f32(b) : bf16_to_f32(b);
    } else if (r.dtype == DType::I32) {
      int32_t v;
      std::memcpy(&v, src + i * 4, 4);
      dst[i] = static_cast<float>(v);
    } else {
      DACPP_THROW(ErrorCode::InvalidModel, "tensor '", r.name, "' has dtype ", dtype_name(r.dtype),
                  ", which cannot be converted to f32 here");
    }
  }
  return TensorRecord{r.name, DType::F32, r.shape, dst, static_cast<size_t>(n) * 4};
}

}  // namespace dacpp
