#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/fault.h"
#include "core/host_memory.h"

namespace dacpp {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    DACPP_CHECK(d >= 0, ErrorCode::InvalidArgument, "shape ", shape_str(s), " has a negative dimension");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      DACPP_THROW(ErrorCode::InvalidArgument, "shape ", shape_str(s), " overflows int64");
    n *= d;
  }
  return n;
}

std::shared_ptr<void> host_alloc(size_t bytes, const std::string& what) {
  DACPP_FAULT_POINT("host.alloc", ErrorCode::OutOfMemory, "allocating ", bytes, " bytes for ", what);
  if (host_memory::maps_huge(bytes)) {  // a large buffer in huge pages (core/host_memory.h)
    void* p = host_memory::map(bytes);
    if (!p) DACPP_THROW(ErrorCode::OutOfMemory, "host allocation of ", bytes, " bytes for ", what, " failed");
    return std::shared_ptr<void>(p, [bytes](void* q) { host_memory::unmap(q, bytes); });
  }
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) DACPP_THROW(ErrorCode::OutOfMemory, "host allocation of ", bytes, " bytes for ", what, " failed");
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Tensor Tensor::empty(const Shape& shape, DType dtype, std::string name) {
  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  t.dtype_ = dtype;
  t.name_ = std::move(name);
  const size_t bytes = dtype_nbytes(dtype, t.numel_);
  DACPP_CHECK(bytes > 0 || t.numel_ == 0, ErrorCode::InvalidArgument, "tensor '", t.name_, "' shape ",
              shape_str(shape), " is not a whole number of ", dtype_name(dtype), " blocks");
  t.storage_ = host_alloc(bytes, t.name_.empty() ? std::string("tensor ") + shape_str(shape) : t.name_);
  t.data_ = t.storage_.get();
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, std::string name) {
  Tensor t = empty(shape, dtype, std::move(name));
  std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::view(void* data, const Shape& shape, DType dtype, Device device, std::shared_ptr<void> keepalive,
                    std::string name) {
  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  t.dtype_ = dtype;
  t.device_ = device;
  t.storage_ = std::move(keepalive);
  t.data_ = data;
  t.name_ = std::move(name);
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values, std::string name) {
  Tensor t = empty(shape, DType::F32, std::move(name));
  DACPP_CHECK(static_cast<int64_t>(values.size()) == t.numel_, ErrorCode::InvalidArgument, "from_vector: ",
              values.size(), " values for shape ", shape_str(shape));
  if (!values.empty()) std::memcpy(t.data_, values.data(), values.size() * sizeof(float));
  return t;
}

int64_t Tensor::dim(int i) const {
  const int r = rank();
  const int j = i < 0 ? i + r : i;
  DACPP_ASSERT(j >= 0 && j < r, "dim ", i, " of tensor '", name_, "' with shape ", shape_str(shape_));
  return shape_[static_cast<size_t>(j)];
}

size_t Tensor::nbytes() const { return dtype_nbytes(dtype_, numel_); }

void Tensor::check_host(const char* what) const {
  if (!device_.is_cpu())
    DACPP_THROW(ErrorCode::Backend, "host code asked for the bytes of tensor '", name_, "' ", shape_str(shape_),
                " which lives on ", device_name(device_), " (", what, "); it is not resident on the host");
}

void Tensor::check_dtype(DType want) const {
  if (dtype_ != want)
    DACPP_THROW(ErrorCode::Internal, "tensor '", name_, "' has dtype ", dtype_name(dtype_), ", accessed as ",
                dtype_name(want));
}

Tensor Tensor::reshape(const Shape& shape) const {
  const int64_t n = shape_numel(shape);
  DACPP_CHECK(n == numel_, ErrorCode::InvalidArgument, "cannot reshape tensor '", name_, "' from ",
              shape_str(shape_), " to ", shape_str(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::slice0(int64_t begin, int64_t end) const {
  DACPP_ASSERT(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0], "slice0 [", begin, ",", end,
               ") of '", name_, "' ", shape_str(shape_));
  DACPP_ASSERT(!dtype_is_quantized(dtype_), "slice0 of a block-quantized tensor '", name_, "'");
  const int64_t row = shape_[0] ? numel_ / shape_[0] : 0;
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.numel_ = row * (end - begin);
  t.data_ = static_cast<char*>(data_) + static_cast<size_t>(begin * row) * dtype_block_bytes(dtype_);
  return t;
}

Tensor Tensor::offset_view(int64_t offset, const Shape& shape) const {
  const int64_t n = shape_numel(shape);
  DACPP_CHECK(!dtype_is_quantized(dtype_) && offset >= 0 && n >= 0 && offset + n <= numel_,
              ErrorCode::InvalidArgument, "tensor '", name_, "' ", shape_str(shape_), ": a view of ", shape_str(shape),
              " at element ", offset, " does not fit");
  Tensor t = *this;
  t.shape_ = shape;
  t.numel_ = n;
  t.data_ = static_cast<char*>(data_) + static_cast<size_t>(offset) * dtype_block_bytes(dtype_);
  return t;
}

Tensor Tensor::clone() const {
  check_host("clone");
  Tensor t = empty(shape_, dtype_, name_);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

}  // namespace dacpp
