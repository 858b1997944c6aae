// Shape arithmetic of numpy-style matmul: 1-D promotion and broadcasting of the batch dims.
#include "batched_matmul.h"

#include "broadcast.h"

namespace reduce::ref {

Expected<MatMulShape> matmul_shape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return make_error("MatMul inputs must not be scalars");
  MatMulShape s;
  s.a_matrix = a.size() == 1 ? Shape{1, a[0]} : a;
  s.b_matrix = b.size() == 1 ? Shape{b[0], 1} : b;
  const Shape& am = s.a_matrix;
  const Shape& bm = s.b_matrix;
  s.m = static_cast<size_t>(am[am.size() - 2]);
  s.k = static_cast<size_t>(am.back());
  s.n = static_cast<size_t>(bm.back());
  if (static_cast<int64_t>(s.k) != bm[bm.size() - 2])
    return make_error("inner dimensions differ: " + shape_to_string(a) + " and " + shape_to_string(b));
  const Shape a_batch(am.begin(), am.end() - 2), b_batch(bm.begin(), bm.end() - 2);
  const Shape batches[] = {a_batch, b_batch};
  REDUCE_ASSIGN(s.batch_shape, broadcast_shapes(batches));
  s.batch = 1;
  for (int64_t d : s.batch_shape) s.batch *= static_cast<size_t>(d);
  s.out = s.batch_shape;
  if (a.size() > 1) s.out.push_back(static_cast<int64_t>(s.m));
  if (b.size() > 1) s.out.push_back(static_cast<int64_t>(s.n));
  REDUCE_ASSIGN(uint64_t out_elements, element_count(s.out));
  if (out_elements == 0) return s;  // nothing to compute: no offsets (the batch count may be huge)
  if (out_elements > max_tensor_bytes()) return make_error("the output " + shape_to_string(s.out) + " is too large");
  s.a_offsets.resize(s.batch);
  s.b_offsets.resize(s.batch);
  const size_t a_mat = s.m * s.k, b_mat = s.k * s.n;
  if (s.batch_shape.empty()) return s;
  for_each_broadcast2(s.batch_shape, a_batch, b_batch, [&](size_t o, size_t i, size_t j) {
    s.a_offsets[o] = i * a_mat;
    s.b_offsets[o] = j * b_mat;
  });
  return s;
}

}  // namespace reduce::ref
