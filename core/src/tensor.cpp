// Tensor storage: allocation with size limits, views, comparison.
#include "core/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <sys/mman.h>

#include <complex>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "core/narrow_types.h"

namespace reduce {

uint64_t max_tensor_bytes() { return uint64_t{16} << 30; }  // 16 GiB

Expected<uint64_t> element_count(const Shape& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return make_error("negative dimension in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return make_error("shape " + shape_to_string(shape) + " has too many elements");
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {
// Zeroed values of this size or more are mapped, not allocated (Tensor::allocate).
constexpr size_t kMappedZeroBytes = size_t{32} << 20;

Expected<size_t> checked_byte_size(DType dtype, const Shape& shape) {
  const size_t esize = dtype_size(dtype);
  if (esize == 0) return make_error("unsupported element type " + std::string(dtype_name(dtype)));
  REDUCE_ASSIGN(uint64_t n, element_count(shape));
  if (n > max_tensor_bytes() / esize)
    return make_error("tensor of shape " + shape_to_string(shape) + " and type " +
                      std::string(dtype_name(dtype)) + " exceeds the size limit of " +
                      std::to_string(max_tensor_bytes()) + " bytes");
  return static_cast<size_t>(n * esize);
}
}  // namespace

Expected<Tensor> Tensor::allocate(DType dtype, Shape shape) {
  REDUCE_ASSIGN(size_t size, checked_byte_size(dtype, shape));
  // A large zeroed value is mapped straight from the kernel's zero pages: no page is resident
  // until something writes it, so a value that is only read (a weight the reducer's fill-weights
  // pass fills with zeros: 64 MiB per candidate in flight for a float[4096,4096] weight) costs no
  // memory. glibc maps allocations this large anyway (M_MMAP_THRESHOLD), and the memset below
  // touched every page of them.
  if (size >= kMappedZeroBytes) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return make_error("cannot map " + std::to_string(size) + " bytes for a tensor");
    std::shared_ptr<std::byte> owner(static_cast<std::byte*>(p), [size](std::byte* q) { ::munmap(q, size); });
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.data_ = owner.get();  // page-aligned
    t.byte_size_ = size;
    t.owner_ = std::move(owner);
    t.writable_ = true;
    return t;
  }
  REDUCE_ASSIGN(Tensor t, allocate_uninitialized(dtype, std::move(shape)));
  if (t.byte_size_) std::memset(t.mutable_bytes().data(), 0, t.byte_size_);
  return t;
}

Expected<Tensor> Tensor::allocate_uninitialized(DType dtype, Shape shape) {
  REDUCE_ASSIGN(size_t size, checked_byte_size(dtype, shape));
  // 64-byte alignment keeps vectorized kernels happy. It is made by hand inside a plain allocation
  // of 63 bytes more, not by an aligned one: glibc's memalign asks for the size plus the alignment
  // and frees the unused ends as small chunks, so the hole a freed value leaves was always a little
  // too small for the next value of the same size, and small allocations pinned the holes apart:
  // a run of same-sized activations grew the heap by many values (issue 20).
  auto* raw = static_cast<std::byte*>(::operator new[](size + 63));
  std::shared_ptr<std::byte> owner(raw, [](std::byte* p) { ::operator delete[](p); });
  const size_t offset = (64 - reinterpret_cast<uintptr_t>(raw) % 64) % 64;
#if defined(__SANITIZE_ADDRESS__)
  // The spare bytes around the value stay out of bounds for AddressSanitizer, as past an exact
  // allocation: a kernel writing past its output is still caught.
  ASAN_POISON_MEMORY_REGION(raw, offset);
  ASAN_POISON_MEMORY_REGION(raw + offset + size, 63 - offset);
#endif
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = raw + offset;
  t.byte_size_ = size;
  t.owner_ = std::move(owner);
  t.writable_ = true;
  return t;
}

Expected<Tensor> Tensor::copy_of(DType dtype, Shape shape, std::span<const std::byte> bytes) {
  REDUCE_ASSIGN(size_t size, checked_byte_size(dtype, shape));
  if (size != bytes.size())
    return make_error("tensor of shape " + shape_to_string(shape) + " and type " +
                      std::string(dtype_name(dtype)) + " needs " + std::to_string(size) +
                      " bytes but " + std::to_string(bytes.size()) + " were given");
  REDUCE_ASSIGN(Tensor t, allocate(dtype, std::move(shape)));
  if (size) std::memcpy(t.mutable_bytes().data(), bytes.data(), size);
  return t;
}

Expected<Tensor> Tensor::view(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                              const std::byte* data, size_t byte_size, bool writable) {
  const size_t esize = dtype_size(dtype);
  if (esize == 0) return make_error("unsupported element type " + std::string(dtype_name(dtype)));
  REDUCE_ASSIGN(uint64_t n, element_count(shape));
  if (n > std::numeric_limits<uint64_t>::max() / esize || n * esize != byte_size)
    return make_error("tensor of shape " + shape_to_string(shape) + " and type " +
                      std::string(dtype_name(dtype)) + " does not match its " +
                      std::to_string(byte_size) + " bytes of data");
  // Kernels read typed pointers: a misaligned view is copied once rather than read unaligned.
  if (reinterpret_cast<uintptr_t>(data) % esize != 0)
    return copy_of(dtype, std::move(shape), {data, byte_size});
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owner_ = std::move(owner);
  t.data_ = data;
  t.byte_size_ = byte_size;
  t.writable_ = writable;
  return t;
}

std::span<std::byte> Tensor::mutable_bytes() {
  assert(writable_ && "tensor is a read-only view");
  return {const_cast<std::byte*>(data_), byte_size_};
}

bool Tensor::equals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_ || byte_size_ != other.byte_size_) return false;
  return byte_size_ == 0 || data_ == other.data_ || std::memcmp(data_, other.data_, byte_size_) == 0;
}

double Tensor::element_as_double(uint64_t i) const {
  assert(i < elements());
  const std::byte* p = data_ + i * dtype_size(dtype_);
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (dtype_) {
    case DType::Float: return load(float{});
    case DType::Double: return load(double{});
    case DType::Float16: return half_to_float(load(uint16_t{}));
    case DType::BFloat16: return bfloat16_to_float(load(uint16_t{}));
    case DType::UInt8: return load(uint8_t{});
    case DType::Int8: return load(int8_t{});
    case DType::UInt16: return load(uint16_t{});
    case DType::Int16: return load(int16_t{});
    case DType::Int32: return load(int32_t{});
    case DType::Int64: return static_cast<double>(load(int64_t{}));
    case DType::UInt32: return load(uint32_t{});
    case DType::UInt64: return static_cast<double>(load(uint64_t{}));
    case DType::Bool: return load(uint8_t{}) ? 1.0 : 0.0;
    case DType::Complex64: return load(float{});  // real part
    case DType::Complex128: return load(double{});
    default:
      if (dtype_is_small_float(dtype_) || dtype_is_small_int(dtype_)) return narrow_to_double(dtype_, load(uint8_t{}));
      return 0.0;
  }
}

}  // namespace reduce
