// Matrix multiply entry point: picks the Eigen build for this CPU (AVX2+FMA when available).
#include "gemm.h"

#define REDUCE_GEMM_VARIANT baseline
#include "gemm_kernel.h"

namespace reduce::ref {

#ifdef REDUCE_GEMM_HAVE_AVX2
namespace avx2 {
void gemm_f64(size_t m, size_t n, size_t k, const double* a, size_t lda, bool trans_a, const double* b, size_t ldb,
              bool trans_b, double* c, size_t ldc);
}
#endif

namespace {
using GemmFn = void (*)(size_t, size_t, size_t, const double*, size_t, bool, const double*, size_t, bool, double*,
                        size_t);

// Chosen once per process from the CPU, so every run (and every thread) sums in the same order.
GemmFn select_gemm() {
#ifdef REDUCE_GEMM_HAVE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &avx2::gemm_f64;
#endif
  return &baseline::gemm_f64;
}
}  // namespace

void gemm_f64(size_t m, size_t n, size_t k, const double* a, size_t lda, bool trans_a, const double* b, size_t ldb,
              bool trans_b, double* c, size_t ldc) {
  static const GemmFn fn = select_gemm();
  if (m == 0 || n == 0) return;
  fn(m, n, k, a, lda, trans_a, b, ldb, trans_b, c, ldc);
}

GemmScratch& gemm_scratch() {
  thread_local GemmScratch scratch;
  return scratch;
}

}  // namespace reduce::ref
