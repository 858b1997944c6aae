// The Eigen double GEMM, compiled once per instruction set (gemm.cpp baseline, gemm_avx2.cpp AVX2+FMA).
// Include only from those files, after defining REDUCE_GEMM_VARIANT to a namespace name. Eigen's
// namespace is renamed per variant so the copies built with different instruction sets never merge
// at link time (one definition rule).
#pragma once

#ifndef REDUCE_GEMM_VARIANT
#error "define REDUCE_GEMM_VARIANT before including gemm_kernel.h"
#endif

#include <cstddef>

#define REDUCE_GEMM_CONCAT_INNER(a, b) a##b
#define REDUCE_GEMM_CONCAT(a, b) REDUCE_GEMM_CONCAT_INNER(a, b)
#define EIGEN_DONT_PARALLELIZE
#define Eigen REDUCE_GEMM_CONCAT(reduce_eigen_, REDUCE_GEMM_VARIANT)
#include <Eigen/Core>

namespace reduce::ref::REDUCE_GEMM_VARIANT {

inline void gemm_f64(size_t m, size_t n, size_t k, const double* a, size_t lda, bool trans_a, const double* b,
                     size_t ldb, bool trans_b, double* c, size_t ldc) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  using OutMap = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
  const auto M = static_cast<Eigen::Index>(m), N = static_cast<Eigen::Index>(n), K = static_cast<Eigen::Index>(k);
  OutMap out(c, M, N, Eigen::OuterStride<>(static_cast<Eigen::Index>(ldc)));
  if (k == 0) {
    out.setZero();
    return;
  }
  const ConstMap am = trans_a ? ConstMap(a, K, M, Eigen::OuterStride<>(static_cast<Eigen::Index>(lda)))
                              : ConstMap(a, M, K, Eigen::OuterStride<>(static_cast<Eigen::Index>(lda)));
  const ConstMap bm = trans_b ? ConstMap(b, N, K, Eigen::OuterStride<>(static_cast<Eigen::Index>(ldb)))
                              : ConstMap(b, K, N, Eigen::OuterStride<>(static_cast<Eigen::Index>(ldb)));
  if (!trans_a && !trans_b) out.noalias() = am * bm;
  else if (trans_a && !trans_b) out.noalias() = am.transpose() * bm;
  else if (!trans_a && trans_b) out.noalias() = am * bm.transpose();
  else out.noalias() = am.transpose() * bm.transpose();
}

}  // namespace reduce::ref::REDUCE_GEMM_VARIANT

#undef Eigen
