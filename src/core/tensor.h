// Tensor: a typed, shaped view of bytes on one device, owning (shared storage) or borrowing.
//
// Layout is always dense row-major (the last dimension is contiguous). Shapes are torch-ordered ([out, in] for a
// linear weight, [N, C, H, W] for images). Copies of a Tensor share storage; `clone()` copies bytes.
// Host code reads bytes only through data<T>(), which refuses non-CPU tensors with an error naming the tensor.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"

namespace dacpp {

using Shape = std::vector<int64_t>;

// "[2,3,4]".
std::string shape_str(const Shape& s);
// Product of dims; throws InvalidArgument on a negative dim or int64 overflow.
int64_t shape_numel(const Shape& s);

class Tensor {
 public:
  Tensor() = default;

  // A new uninitialised host tensor (64-byte aligned). Throws OutOfMemory (site "host.alloc").
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, std::string name = {});
  // A new host tensor filled with zeros.
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, std::string name = {});
  // Borrows `data` (not owned). `keepalive`, if given, is held for the tensor's lifetime (e.g. an mmap).
  static Tensor view(void* data, const Shape& shape, DType dtype, Device device = Device::cpu(),
                     std::shared_ptr<void> keepalive = nullptr, std::string name = {});
  // A host f32 tensor holding `values`; throws InvalidArgument if the sizes disagree.
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values, std::string name = {});

  bool defined() const { return data_ != nullptr || (numel_ == 0 && !shape_.empty()); }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Dimension i; negative i counts from the end. Throws Internal when out of range.
  int64_t dim(int i) const;
  int64_t numel() const { return numel_; }
  size_t nbytes() const;
  DType dtype() const { return dtype_; }
  const Device& device() const { return device_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // The owner of the bytes (null for a pure borrow): lets caches tie derived data to the weight's lifetime.
  const std::shared_ptr<void>& storage() const { return storage_; }

  // Raw pointer, whatever the device. Only backends for the tensor's device may dereference it.
  void* raw() { return data_; }
  const void* raw() const { return data_; }

  // Typed host pointer. Throws Internal on a dtype mismatch and Backend when the tensor is not on the CPU:
  // this is the check that keeps host code from ever reading a device pointer.
  template <typename T>
  T* data();
  template <typename T>
  const T* data() const;

  // Same storage, new shape with equal numel. Throws InvalidArgument naming the tensor otherwise.
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) of dimension 0, sharing storage.
  Tensor slice0(int64_t begin, int64_t end) const;
  // A borrowing view of `shape` starting `offset` elements into this tensor's bytes (any device; plain dtypes
  // only). Throws InvalidArgument naming the tensor when the view does not fit.
  Tensor offset_view(int64_t offset, const Shape& shape) const;
  // A host copy with its own storage.
  Tensor clone() const;

 private:
  void check_host(const char* what) const;
  void check_dtype(DType want) const;

  std::shared_ptr<void> storage_;  // keeps the bytes alive; null for a pure borrow
  void* data_ = nullptr;
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
  Device device_;
  std::string name_;
};

template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::F16; };  // raw half bits
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::Q8_0; };   // raw block bytes

template <typename T>
T* Tensor::data() {
  check_host("data");
  if constexpr (std::is_same_v<T, uint8_t>) return static_cast<T*>(data_);  // raw bytes of any dtype
  else if constexpr (std::is_same_v<T, uint16_t>) {
    if (dtype_ != DType::F16 && dtype_ != DType::BF16) check_dtype(DType::F16);
    return static_cast<T*>(data_);
  } else {
    check_dtype(DTypeOf<T>::value);
    return static_cast<T*>(data_);
  }
}

template <typename T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}

// Aligned host allocation (64 bytes). Throws OutOfMemory naming `what` and the size; honours site "host.alloc".
std::shared_ptr<void> host_alloc(size_t bytes, const std::string& what);

}  // namespace dacpp
