// Double copies of floating operands for the double-accumulating GEMM, and a cache that keeps the
// copy of a constant operand (weights) from one run to the next.
#pragma once

#include <mutex>

#include "core/tensor.h"

namespace reduce::ref {

// The elements of `t` (element type T) as a flat double tensor.
template <typename T>
Expected<Tensor> to_double(const Tensor& t) {
  REDUCE_ASSIGN(Tensor d, Tensor::allocate_uninitialized(DType::Double, {static_cast<int64_t>(t.elements())}));
  auto src = t.data<T>();
  auto dst = d.mutable_data<double>();
  for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<double>(src[i]);
  return d;
}

// Caches the double copy of one operand that the executor reports as constant (an initializer):
// its storage never changes while the prepared model lives, and the cache holds the source tensor,
// so its storage cannot be freed and reused by another tensor while cached. Thread-safe.
class DoubleCopyCache {
 public:
  template <typename T>
  Expected<Tensor> get(const Tensor& t, bool constant) const {
    if (!constant) return to_double<T>(t);
    std::lock_guard lock(mu_);
    if (source_.shares_storage_with(t) && source_.shape() == t.shape() && source_.dtype() == t.dtype()) return copy_;
    REDUCE_ASSIGN(Tensor d, to_double<T>(t));
    source_ = t;
    copy_ = d;
    return d;
  }

 private:
  mutable std::mutex mu_;
  mutable Tensor source_;
  mutable Tensor copy_;
};

}  // namespace reduce::ref
