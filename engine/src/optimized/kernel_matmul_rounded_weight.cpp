// MatMulRoundedWeight (made by round_weights_at_use, mixed_precision.cpp): a MatMul whose large
// float weight B is stored unrounded and rounded to fp16/bf16 block by block as the product reads
// it, so no rounded copy of the whole weight is ever held. Same values and summation order as the
// reference MatMul on a weight stored rounded.
#include "fused_kernel.h"
#include "rounding.h"
#include "reference/batched_matmul.h"

namespace reduce::opt {

namespace {

struct ReadRounded {
  Precision precision;
  void operator()(const float* src, size_t ld, size_t rows, size_t cols, double* dst) const {
    for (size_t r = 0; r < rows; ++r, src += ld, dst += cols)
      for (size_t c = 0; c < cols; ++c) dst[c] = round_float(src[c], precision);
  }
};

class MatMulRoundedWeightKernel : public Kernel {
 public:
  explicit MatMulRoundedWeightKernel(Precision precision) : precision_(precision) {}

  // Inputs: A, B (a constant float weight, unrounded).
  Status compute(KernelContext& ctx) const override {
    if (!ctx.input(0) || !ctx.input(1)) return make_error("MatMulRoundedWeight: missing input");
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dtype() != b.dtype() || b.dtype() != DType::Float) return make_error("inputs A and B must have the same type");
    REDUCE_ASSIGN(ref::MatMulShape s, ref::matmul_shape(a.shape(), b.shape()));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Float, s.out));
    ref::matmul_to(s, a.data<float>().data(), b.data<float>().data(), out.mutable_data<float>().data(),
                   ReadRounded{precision_});
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  Precision precision_;
};

}  // namespace

Expected<KernelPtr> make_matmul_rounded_weight(const FusedKernelSpec& spec) {
  if (spec.options.precision == Precision::FP32) return make_error("MatMulRoundedWeight: needs fp16 or bf16");
  return KernelPtr(new MatMulRoundedWeightKernel(spec.options.precision));
}

}  // namespace reduce::opt
