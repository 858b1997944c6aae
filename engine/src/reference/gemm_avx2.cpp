// The Eigen double GEMM built for AVX2+FMA; gemm.cpp calls it only on CPUs that have both.
#define REDUCE_GEMM_VARIANT avx2_impl
#include "gemm_kernel.h"

namespace reduce::ref::avx2 {

void gemm_f64(size_t m, size_t n, size_t k, const double* a, size_t lda, bool trans_a, const double* b, size_t ldb,
              bool trans_b, double* c, size_t ldc) {
  avx2_impl::gemm_f64(m, n, k, a, lda, trans_a, b, ldb, trans_b, c, ldc);
}

}  // namespace reduce::ref::avx2
