// Matrix multiply for the reference kernels: double accumulation on Eigen, deterministic for any thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "parallel.h"

namespace reduce::ref {

// C[m x n] = op(A) * op(B) in double, single-threaded. A is stored row-major with leading dimension
// lda as m x k, or as k x m when trans_a; B likewise as k x n, or n x k when trans_b. C is row-major
// with leading dimension ldc. The result depends only on the arguments (Eigen's own threading is off).
void gemm_f64(size_t m, size_t n, size_t k, const double* a, size_t lda, bool trans_a, const double* b, size_t ldb,
              bool trans_b, double* c, size_t ldc);

// Copies a rows x cols block (row-major, leading dimension ld) into dst as doubles, packed (leading
// dimension cols). Kernels convert the operand blocks of each gemm_f64 call this way instead of
// whole operands: a constant weight of 1 GiB of floats is never held as 2 GiB of doubles. The
// result of gemm_f64 depends on the sizes, never on the leading dimensions, so it is unchanged.
template <typename T>
void block_as_double(const T* src, size_t ld, size_t rows, size_t cols, double* dst) {
  for (size_t r = 0; r < rows; ++r, src += ld, dst += cols)
    for (size_t c = 0; c < cols; ++c) dst[c] = static_cast<double>(src[c]);
}

// The doubles one product block works in. One set per thread, shared by every kernel that
// multiplies in blocks: a thread_local in each kernel (each template instance) kept a set per
// kernel per thread, 12 MiB each for a float[4096,4096] weight, for the thread's whole life. A block
// runs no other kernel's block while it uses them.
struct GemmScratch {
  std::vector<double> sums, a_block, b_block;
};
GemmScratch& gemm_scratch();

// Outputs are split into blocks of at most this many rows and columns. The sizes are fixed, never
// derived from the thread count, so each block sees the same Eigen blocking (and summation order)
// whether it runs on one thread or many.
inline constexpr size_t kGemmRowBlock = 128;
inline constexpr size_t kGemmColBlock = 256;

// One output block of a batched product: batch index, first row and column, and its extent.
struct GemmBlock {
  size_t batch, row, rows, col, cols;
};

// Calls fn(const GemmBlock&) for every fixed block of `batch` outputs of m x n, possibly in parallel.
// `k` (the depth) only sizes the chunks so that tiny blocks are grouped (still independent of threads).
template <typename Fn>
void for_each_gemm_block(size_t batch, size_t m, size_t n, size_t k, Fn&& fn) {
  if (batch == 0 || m == 0 || n == 0) return;
  const size_t row_blocks = (m + kGemmRowBlock - 1) / kGemmRowBlock;
  const size_t col_blocks = (n + kGemmColBlock - 1) / kGemmColBlock;
  const size_t per_batch = row_blocks * col_blocks;
  const size_t block_work = std::min(m, kGemmRowBlock) * std::min(n, kGemmColBlock) * std::max<size_t>(k, 1);
  const size_t grain = std::max<size_t>(1, (size_t{1} << 16) / std::max<size_t>(block_work, 1));
  parallel_for(batch * per_batch, grain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const size_t b = i / per_batch, r = (i % per_batch) / col_blocks, c = i % col_blocks;
      GemmBlock blk{b, r * kGemmRowBlock, 0, c * kGemmColBlock, 0};
      blk.rows = std::min(kGemmRowBlock, m - blk.row);
      blk.cols = std::min(kGemmColBlock, n - blk.col);
      fn(blk);
    }
  });
}

}  // namespace reduce::ref
