// numpy-style matmul (batch broadcasting, 1-D promotion) in double, shared by MatMul, MatMulInteger, QLinearMatMul.
#pragma once

#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "gemm.h"

namespace reduce::ref {

// The shape arithmetic of one matmul: output shape, batch count, matrix sizes, and the element
// offset of each batch's A and B matrix (broadcast batches share offsets).
struct MatMulShape {
  Shape out;          // the output shape, with promoted 1-D dims removed
  Shape batch_shape;  // the broadcast batch dims
  size_t batch = 1, m = 0, n = 0, k = 0;
  std::vector<size_t> a_offsets, b_offsets;  // empty when the output is empty
  Shape a_matrix, b_matrix;  // A and B as matrices with batch dims: 1-D inputs promoted to [1,K] / [K,1]
};

Expected<MatMulShape> matmul_shape(const Shape& a, const Shape& b);

// Reads a block of B as doubles: as they are, unless a kernel stores B in another precision and
// rounds it as it reads (the optimized engine's weights rounded at use).
struct ReadAsDouble {
  template <typename T>
  void operator()(const T* src, size_t ld, size_t rows, size_t cols, double* dst) const {
    block_as_double(src, ld, rows, cols, dst);
  }
};

// Computes C = A * B for every batch with double sums and calls store(batch, row, col, count, sums)
// for runs of one output row. a and b hold the inputs in their original layout, as T; each block
// converts only the rows of A and the columns of B it reads (doubles are read in place), B through
// `read_b`.
template <typename T, typename Store, typename ReadB = ReadAsDouble>
void batched_matmul_f64(const MatMulShape& s, const T* a, const T* b, const Store& store, const ReadB& read_b = {}) {
  // When B is shared by all batches and A's batches are consecutive, the batches are one taller
  // matrix: fewer, larger blocks (the split is still fixed by the shapes alone).
  if (s.a_offsets.empty()) return;  // empty output
  bool fold = s.batch > 1;
  for (size_t i = 0; fold && i < s.batch; ++i) fold = s.b_offsets[i] == s.b_offsets[0] && s.a_offsets[i] == i * s.m * s.k;
  const size_t batches = fold ? 1 : s.batch, rows = fold ? s.batch * s.m : s.m;
  for_each_gemm_block(batches, rows, s.n, s.k, [&](const GemmBlock& blk) {
    auto& [sums, a_block, b_block] = gemm_scratch();
    sums.resize(blk.rows * blk.cols);
    const T* ab = a + s.a_offsets[blk.batch] + blk.row * s.k;
    const T* bb = b + s.b_offsets[blk.batch] + blk.col;
    if constexpr (std::is_same_v<T, double> && std::is_same_v<ReadB, ReadAsDouble>) {
      gemm_f64(blk.rows, blk.cols, s.k, ab, s.k, false, bb, s.n, false, sums.data(), blk.cols);
    } else {
      a_block.resize(blk.rows * s.k);
      b_block.resize(s.k * blk.cols);
      block_as_double(ab, s.k, blk.rows, s.k, a_block.data());
      read_b(bb, s.n, s.k, blk.cols, b_block.data());
      gemm_f64(blk.rows, blk.cols, s.k, a_block.data(), s.k, false, b_block.data(), blk.cols, false, sums.data(),
               blk.cols);
    }
    for (size_t r = 0; r < blk.rows; ++r) {
      const size_t row = blk.row + r;
      if (fold) store(row / s.m, row % s.m, blk.col, blk.cols, sums.data() + r * blk.cols);
      else store(blk.batch, row, blk.col, blk.cols, sums.data() + r * blk.cols);
    }
  });
}

// C = A * B stored as T: each double sum rounded to T once (MatMul's floating-point path; the
// optimized engine's MatMulRoundedWeight with its own `read_b`).
template <typename T, typename ReadB = ReadAsDouble>
void matmul_to(const MatMulShape& s, const T* a, const T* b, T* y, const ReadB& read_b = {}) {
  batched_matmul_f64(
      s, a, b,
      [&](size_t batch, size_t row, size_t col, size_t count, const double* sums) {
        T* dst = y + (batch * s.m + row) * s.n + col;
        for (size_t j = 0; j < count; ++j) dst[j] = static_cast<T>(sums[j]);
      },
      read_b);
}

}  // namespace reduce::ref
