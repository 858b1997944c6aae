// ConvTranspose: per group, columns = W^T * X by the double GEMM, then col2im sums them into the output.
#include <type_traits>

#include "reference/conv_geometry.h"
#include "reference/gemm.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// Adds the columns of one output channel (rows [kidx] = kernel offsets, columns = input positions)
// into its output plane `acc`, in a fixed order (kernel offset, then input position).
void col2im_channel(const ConvGeometry& g, const double* col, size_t in_size, double* acc) {
  const size_t rank = g.in.size(), last = rank - 1, ksize = g.kernel_size();
  const size_t in_last = g.in[last], out_last = g.out[last];
  std::vector<size_t> kk(rank), ic(rank, 0);
  for (size_t kidx = 0; kidx < ksize; ++kidx) {
    size_t rest = kidx;
    for (size_t d = rank; d-- > 0;) {
      kk[d] = rest % g.kernel[d];
      rest /= g.kernel[d];
    }
    const double* row = col + kidx * in_size;
    const int64_t off = static_cast<int64_t>(kk[last] * g.dilations[last]) - g.pad_begin[last];
    const int64_t s = static_cast<int64_t>(g.strides[last]);
    std::fill(ic.begin(), ic.end(), 0);
    for (size_t outer = 0; outer < in_size; outer += in_last) {
      bool valid = true;
      size_t base = 0;
      for (size_t d = 0; d < last; ++d) {
        const int64_t o = static_cast<int64_t>(ic[d] * g.strides[d] + kk[d] * g.dilations[d]) - g.pad_begin[d];
        if (o < 0 || o >= static_cast<int64_t>(g.out[d])) {
          valid = false;
          break;
        }
        base = base * g.out[d] + static_cast<size_t>(o);
      }
      if (valid) {
        double* dst = acc + base * out_last;
        const double* src = row + outer;
        for (size_t iw = 0; iw < in_last; ++iw) {
          const int64_t ow = static_cast<int64_t>(iw) * s + off;
          if (ow >= 0 && ow < static_cast<int64_t>(out_last)) dst[ow] += src[iw];
        }
      }
      for (size_t d = last; d-- > 0;) {  // next outer input coordinate
        if (++ic[d] < g.in[d]) break;
        ic[d] = 0;
      }
    }
  }
}

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    REDUCE_ASSIGN(ConvProblem problem, float_conv_problem(attrs_, x, w, b, true));
    const ConvGeometry& g = problem.geometry;
    const Tensor &wx = problem.ops.x, &ww = problem.ops.w, &wb = problem.ops.b;
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), g.output_shape()));
    const size_t in_size = g.in_size(), out_size = g.out_size(), ksize = g.kernel_size();
    const size_t cg = g.in_channels / g.group, mg = g.out_channels / g.group, M = g.out_channels;
    if (g.batch == 0 || M == 0 || out_size == 0) {
      REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
      ctx.set_output(0, std::move(result));
      return {};
    }
    // Doubles: the image and the columns of one image; output planes are per task.
    const int64_t cols_elems = static_cast<int64_t>(M * ksize);
    REDUCE_ASSIGN(Tensor xd, Tensor::allocate(DType::Double, {static_cast<int64_t>(g.in_channels * in_size)}));
    REDUCE_ASSIGN(Tensor cols, Tensor::allocate(DType::Double, {cols_elems, static_cast<int64_t>(in_size)}));
    if (out_size > max_tensor_bytes() / sizeof(double))
      return make_error("the output planes are larger than the tensor size limit");
    Status status;
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* wp = ww.data<T>().data();
        double* xdp = xd.mutable_data<double>().data();
        double* colp = cols.mutable_data<double>().data();
        T* y = out.mutable_data<T>().data();
        const T* xs = wx.data<T>().data();
        for (size_t n = 0; n < g.batch; ++n) {
          const T* xn = xs + n * g.in_channels * in_size;
          for (size_t i = 0; i < g.in_channels * in_size; ++i) xdp[i] = static_cast<double>(xn[i]);
          // Group gi: columns [mg * ksize, in_size] = W_gi^T (W_gi is [cg, mg * ksize]) * X_gi [cg, in_size].
          const size_t rows = mg * ksize;
          for_each_gemm_block(g.group, rows, in_size, cg, [&](const GemmBlock& blk) {
            const size_t gi = blk.batch;
            // The block's columns of W_gi as doubles: the weights are never converted whole.
            thread_local std::vector<double> w_block;
            w_block.resize(cg * blk.rows);
            block_as_double(wp + gi * cg * rows + blk.row, rows, cg, blk.rows, w_block.data());
            gemm_f64(blk.rows, blk.cols, cg, w_block.data(), blk.rows, true,
                     xdp + gi * cg * in_size + blk.col, in_size, false,
                     colp + (gi * rows + blk.row) * in_size + blk.col, in_size);
          });
          parallel_for(M, std::max<size_t>(1, (size_t{1} << 16) / std::max<size_t>(1, ksize * in_size)),
                       [&](size_t begin, size_t end) {
                         thread_local std::vector<double> buffer;
                         buffer.assign(out_size, 0.0);
                         for (size_t m = begin; m < end; ++m) {
                           double* plane = buffer.data();
                           if (m != begin) std::fill(plane, plane + out_size, 0.0);
                           col2im_channel(g, colp + m * ksize * in_size, in_size, plane);
                           const double bias = b ? static_cast<double>(wb.data<T>()[m]) : 0.0;
                           T* dst = y + (n * M + m) * out_size;
                           for (size_t o = 0; o < out_size; ++o) dst[o] = static_cast<T>(plane[o] + bias);
                         }
                       });
        }
      }
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  ConvAttributes attrs_;
};

}  // namespace

Expected<KernelPtr> make_conv_transpose(const Node& node, int64_t) {
  REDUCE_ASSIGN(ConvAttributes attrs, parse_conv_attributes(node, true));
  return KernelPtr(new ConvTransposeKernel(std::move(attrs)));
}

}  // namespace reduce::ref
