// Tensor: dtype, shape and a view of contiguous bytes whose storage is shared (owned buffer or mapped file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace reduce {

using Shape = std::vector<int64_t>;

// Element count of a shape, or an error when a dim is negative or the count overflows.
Expected<uint64_t> element_count(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[1,3,48,320]"

// Largest tensor we agree to allocate for user data (shape bombs must fail, not allocate): 16 GiB.
// A constant, not a setting: a run's own memory limit is RunLimits::max_memory_bytes (--max-memory).
uint64_t max_tensor_bytes();

class Tensor {
 public:
  Tensor() = default;

  // Zero-filled owned storage. Fails if the shape is invalid or the size exceeds max_tensor_bytes().
  // From 32 MiB on it is a private anonymous mapping: pages are resident only once written.
  static Expected<Tensor> allocate(DType dtype, Shape shape);
  // Like allocate, without the zero fill: for kernels that write every element (hot paths).
  static Expected<Tensor> allocate_uninitialized(DType dtype, Shape shape);
  // Owned storage holding a copy of `bytes` (which must be exactly the tensor's byte size).
  static Expected<Tensor> copy_of(DType dtype, Shape shape, std::span<const std::byte> bytes);
  // A view of memory kept alive by `owner` (a mapped file, a protobuf string, another buffer).
  // No copy. The view is read-only unless `writable`.
  static Expected<Tensor> view(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                               const std::byte* data, size_t byte_size, bool writable = false);
  template <typename T>
  static Expected<Tensor> from_vector(DType dtype, Shape shape, const std::vector<T>& values) {
    return copy_of(dtype, std::move(shape),
                   std::as_bytes(std::span<const T>(values.data(), values.size())));
  }

  bool empty() const { return dtype_ == DType::Undefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  uint64_t elements() const { return byte_size_ / (dtype_size(dtype_) ? dtype_size(dtype_) : 1); }
  size_t byte_size() const { return byte_size_; }

  std::span<const std::byte> bytes() const { return {data_, byte_size_}; }
  // Writable bytes; only for tensors that own their storage or were made writable views.
  std::span<std::byte> mutable_bytes();
  bool writable() const { return writable_; }

  template <typename T>
  std::span<const T> data() const {
    return {reinterpret_cast<const T*>(data_), byte_size_ / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_data() {
    auto b = mutable_bytes();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }

  // Same storage (used to check that weights are shared, never copied).
  bool shares_storage_with(const Tensor& other) const { return data_ == other.data_ && owner_ == other.owner_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // Same dtype, shape and bytes.
  bool equals(const Tensor& other) const;
  // Value of element i converted to double (for printing and tests; not a kernel path).
  double element_as_double(uint64_t i) const;

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t byte_size_ = 0;
  bool writable_ = false;
};

}  // namespace reduce
