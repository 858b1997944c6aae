// Leading slices of tensors (shape reduction of candidate inputs).
#include "leading_slice.h"

#include <cstring>

namespace reduce {

Expected<Tensor> leading_slice(const Tensor& t, const Shape& shape) {
  if (shape.size() != t.rank())
    return make_error("cannot slice " + shape_to_string(t.shape()) + " to rank-" + std::to_string(shape.size()) + " shape");
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0 || shape[d] > t.shape()[d])
      return make_error("cannot slice " + shape_to_string(t.shape()) + " to " + shape_to_string(shape));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(t.dtype(), shape));
  if (out.elements() == 0) return out;
  const size_t esize = dtype_size(t.dtype());
  const size_t rank = shape.size();
  // Copy rows of the innermost dim; walk the outer index like an odometer.
  const size_t row = rank ? static_cast<size_t>(shape[rank - 1]) * esize : esize;
  std::vector<int64_t> src_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) src_strides[d - 1] = src_strides[d] * t.shape()[d];
  std::vector<int64_t> idx(rank, 0);
  const std::byte* src = t.bytes().data();
  std::byte* dst = out.mutable_bytes().data();
  const uint64_t rows = rank ? out.elements() / static_cast<uint64_t>(shape[rank - 1]) : 1;
  for (uint64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < rank; ++d) offset += idx[d] * src_strides[d];
    std::memcpy(dst, src + offset * esize, row);
    dst += row;
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace reduce
