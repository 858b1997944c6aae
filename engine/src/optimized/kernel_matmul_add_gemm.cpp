// MatMulAddGemm (pass matmul-add-gemm): A [..., K] x B [K, N] + C [N] as one reference Gemm over A
// viewed as [M, K] (as ONNX Runtime's MatMul+Add fusion reshapes around a Gemm).
#include "fused_kernel.h"

namespace reduce::opt {

namespace {

class MatMulAddGemmKernel : public Kernel {
 public:
  explicit MatMulAddGemmKernel(KernelPtr gemm) : gemm_(std::move(gemm)) {}

  // Inputs: A, B (constant [K, N]), C (constant, N values).
  Status compute(KernelContext& ctx) const override {
    if (!ctx.input(0) || !ctx.input(1)) return make_error("MatMulAddGemm: missing input");
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.rank() < 1 || b.rank() != 2) return make_error("MatMulAddGemm: A must have an axis and B must be a matrix");
    const int64_t k = a.shape().back();
    const int64_t m = k ? static_cast<int64_t>(a.elements()) / k : 0;
    if (k == 0) return make_error("MatMulAddGemm: empty inner dimension");
    REDUCE_ASSIGN(Tensor a2, reshaped(a, {m, k}));
    REDUCE_ASSIGN(Tensor y, run_part(*gemm_, {&a2, &b, ctx.input(2)},
                                     {ctx.input_is_constant(0), ctx.input_is_constant(1), ctx.input_is_constant(2)}));
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    if (a.rank() == 1) out_shape.clear();
    out_shape.push_back(b.shape()[1]);
    REDUCE_ASSIGN(Tensor out, reshaped(y, std::move(out_shape)));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  KernelPtr gemm_;
};

}  // namespace

Expected<KernelPtr> make_matmul_add_gemm(const FusedKernelSpec& spec) {
  Node gemm;
  gemm.op_type = "Gemm";
  REDUCE_ASSIGN(KernelPtr kernel, make_reference_kernel(gemm, std::max<int64_t>(spec.opset, 13)));
  return KernelPtr(new MatMulAddGemmKernel(std::move(kernel)));
}

}  // namespace reduce::opt
