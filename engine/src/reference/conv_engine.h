// Forward convolution for Conv, ConvInteger and QLinearConv: im2col + double GEMM per group, direct
// loops for depthwise. Sums are exact-order double sums, identical for any thread count.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "conv_geometry.h"
#include "gemm.h"
#include "parallel.h"

namespace reduce::ref {

namespace conv_detail {

// Fills panel[k * count + j] (k over C/group * kernel_size rows, j over `count` output positions
// starting at `pos`) with double(x) - x_offset, or 0 where the kernel reads padding. `x` points at
// the first channel of the group in one image.
template <typename T>
void im2col_block(const ConvGeometry& g, const T* x, double x_offset, size_t channels, size_t pos, size_t count,
                  double* panel) {
  const size_t rank = g.out.size(), ksize = g.kernel_size(), in_size = g.in_size();
  const size_t last = rank - 1, out_last = g.out[last], in_last = g.in[last];
  std::vector<size_t> kk(rank), start(rank), coord(rank);
  {  // coordinates of the first position of the block
    size_t p = pos;
    for (size_t d = rank; d-- > 0;) {
      start[d] = p % g.out[d];
      p /= g.out[d];
    }
  }
  for (size_t k = 0; k < channels * ksize; ++k) {
    const size_t c = k / ksize;
    size_t kidx = k % ksize;
    for (size_t d = rank; d-- > 0;) {
      kk[d] = kidx % g.kernel[d];
      kidx /= g.kernel[d];
    }
    const T* xc = x + c * in_size;
    double* dst = panel + k * count;
    coord = start;
    const int64_t off_last = static_cast<int64_t>(kk[last] * g.dilations[last]) - g.pad_begin[last];
    const int64_t s_last = static_cast<int64_t>(g.strides[last]);
    size_t j = 0;
    while (j < count) {
      const size_t seg = std::min(count - j, out_last - coord[last]);
      // Offset of the outer dims, or invalid when that input row is padding.
      bool valid = true;
      size_t base = 0;
      for (size_t d = 0; d < last; ++d) {
        const int64_t i = static_cast<int64_t>(coord[d] * g.strides[d] + kk[d] * g.dilations[d]) - g.pad_begin[d];
        if (i < 0 || i >= static_cast<int64_t>(g.in[d])) {
          valid = false;
          break;
        }
        base = base * g.in[d] + static_cast<size_t>(i);
      }
      if (!valid) {
        std::fill(dst + j, dst + j + seg, 0.0);
      } else {
        // Positions t of the segment read input column first + t * s_last; those inside the row
        // form one range [lo, hi), the rest read padding.
        const T* row = xc + base * in_last;
        const int64_t first = static_cast<int64_t>(coord[last]) * s_last + off_last;
        const int64_t n = static_cast<int64_t>(seg), width = static_cast<int64_t>(in_last);
        const int64_t lo = std::min(n, first >= 0 ? 0 : (-first + s_last - 1) / s_last);
        const int64_t hi = std::clamp(first >= width ? 0 : (width - 1 - first) / s_last + 1, lo, n);
        double* d = dst + j;
        std::fill(d, d + lo, 0.0);
        if (s_last == 1) {
          for (int64_t t = lo; t < hi; ++t) d[t] = static_cast<double>(row[first + t]) - x_offset;
        } else {
          for (int64_t t = lo; t < hi; ++t) d[t] = static_cast<double>(row[first + t * s_last]) - x_offset;
        }
        std::fill(d + hi, d + n, 0.0);
      }
      j += seg;
      coord[last] += seg;
      for (size_t d = last; d > 0 && coord[d] == g.out[d]; --d) {
        coord[d] = 0;
        ++coord[d - 1];
      }
    }
  }
}

// Depthwise (one input channel per group), 1-D or 2-D: direct loops over each output row.
template <typename T, typename Weight, typename Epilogue>
void depthwise(const ConvGeometry& g, const T* x, double x_offset, const Weight* w, const Epilogue& epilogue) {
  const bool two = g.out.size() == 2;
  const size_t H = two ? g.in[0] : 1, W = g.in.back(), OH = two ? g.out[0] : 1, OW = g.out.back();
  const size_t KH = two ? g.kernel[0] : 1, KW = g.kernel.back();
  const size_t sh = two ? g.strides[0] : 1, sw = g.strides.back();
  const size_t dh = two ? g.dilations[0] : 1, dw = g.dilations.back();
  const int64_t ph = two ? g.pad_begin[0] : 0, pw = g.pad_begin.back();
  const size_t M = g.out_channels, per_group = M / g.group;
  const size_t work = std::max<size_t>(1, OH * OW * KH * KW);
  parallel_for(g.batch * M, std::max<size_t>(1, (size_t{1} << 16) / work), [&](size_t begin, size_t end) {
    std::vector<double> acc(OW);
    for (size_t nm = begin; nm < end; ++nm) {
      const size_t n = nm / M, m = nm % M, c = m / per_group;
      const T* xc = x + (n * g.in_channels + c) * H * W;
      const Weight* wm = w + m * KH * KW;
      for (size_t oh = 0; oh < OH; ++oh) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t kh = 0; kh < KH; ++kh) {
          const int64_t ih = static_cast<int64_t>(oh * sh + kh * dh) - ph;
          if (ih < 0 || ih >= static_cast<int64_t>(H)) continue;
          const T* row = xc + static_cast<size_t>(ih) * W;
          for (size_t kw = 0; kw < KW; ++kw) {
            const double wv = static_cast<double>(wm[kh * KW + kw]);
            const int64_t off = static_cast<int64_t>(kw * dw) - pw;
            // Output columns whose input column ow * sw + off lies inside the row.
            const int64_t s = static_cast<int64_t>(sw);
            const int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
            const int64_t hi_raw = static_cast<int64_t>(W) - 1 - off;
            if (hi_raw < 0) continue;
            const size_t hi = std::min<size_t>(OW, static_cast<size_t>(hi_raw / s) + 1);
            if (sw == 1) {
              for (size_t ow = static_cast<size_t>(lo); ow < hi; ++ow)
                acc[ow] += wv * (static_cast<double>(row[static_cast<int64_t>(ow) + off]) - x_offset);
            } else {
              for (size_t ow = static_cast<size_t>(lo); ow < hi; ++ow)
                acc[ow] += wv * (static_cast<double>(row[static_cast<int64_t>(ow * sw) + off]) - x_offset);
            }
          }
        }
        epilogue(n, m, oh * OW, OW, acc.data());
      }
    }
  });
}

}  // namespace conv_detail

// Forward convolution. x is [N, C, in...] of T, read as double(x) - x_offset (padding reads 0);
// w holds [M, C/group * kernel_size] values of Weight, read as doubles block by block (never converted
// whole: the weights stay the only copy). Calls epilogue(n, m, pos, count, sums) for runs of
// output positions of channel m in image n; every output element is reported exactly once.
// Fails only when a scratch panel would exceed the tensor size limit.
template <typename T, typename Weight, typename Epilogue>
Status conv_forward(const ConvGeometry& g, const T* x, double x_offset, const Weight* w, const Epilogue& epilogue) {
  const size_t out_size = g.out_size();
  if (g.batch == 0 || g.out_channels == 0 || out_size == 0) return {};
  const size_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  if (cg == 1 && g.out.size() <= 2) {
    conv_detail::depthwise(g, x, x_offset, w, epilogue);
    return {};
  }
  const size_t K = cg * g.kernel_size();
  const size_t panel_cols = std::min(out_size, kGemmColBlock);
  if (K > max_tensor_bytes() / sizeof(double) / panel_cols)
    return make_error("the convolution needs a scratch panel larger than the tensor size limit");
  const size_t in_size = g.in_size();
  for_each_gemm_block(g.batch * g.group, mg, out_size, K, [&](const GemmBlock& b) {
    thread_local std::vector<double> panel, sums, w_block;
    panel.resize(K * b.cols);
    sums.resize(b.rows * b.cols);
    const size_t n = b.batch / g.group, gi = b.batch % g.group;
    conv_detail::im2col_block(g, x + (n * g.in_channels + gi * cg) * in_size, x_offset, cg, b.col, b.cols,
                              panel.data());
    const Weight* wb = w + (gi * mg + b.row) * K;
    const double* wd = nullptr;
    if constexpr (std::is_same_v<Weight, double>) {
      wd = wb;
    } else {
      w_block.resize(b.rows * K);
      block_as_double(wb, K, b.rows, K, w_block.data());
      wd = w_block.data();
    }
    gemm_f64(b.rows, b.cols, K, wd, K, false, panel.data(), b.cols, false, sums.data(), b.cols);
    for (size_t r = 0; r < b.rows; ++r) epilogue(n, gi * mg + b.row + r, b.col, b.cols, sums.data() + r * b.cols);
  });
  return {};
}

}  // namespace reduce::ref
