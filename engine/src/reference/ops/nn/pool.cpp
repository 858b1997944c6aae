// AveragePool, MaxPool (with Indices) and LpPool over 1-d to 8-d windows, parallel over N*C planes.
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "pool_geometry.h"

namespace reduce::ref {

namespace {

enum class PoolKind { Average, Max, Lp };

// Walks every output position of one plane and, for each, every in-input tap of its window.
// visit(out_index, offsets...) is driven through begin/tap/end callbacks to keep the hot loop flat.
struct PlaneWalker {
  const std::vector<PoolAxis>& axes;
  std::vector<int64_t> in_strides;   // row-major strides of the input plane
  std::vector<int64_t> col_strides;  // column-major strides (MaxPool storage_order = 1)

  explicit PlaneWalker(const std::vector<PoolAxis>& a) : axes(a) {
    const size_t n = a.size();
    in_strides.assign(n, 1);
    col_strides.assign(n, 1);
    for (size_t d = n - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * a[d + 1].in;
    for (size_t d = 1; d < n; ++d) col_strides[d] = col_strides[d - 1] * a[d - 1].in;
  }

  // fn(out_index, padded_count, taps) where taps(g) calls g(row_offset, col_offset) per tap in row-major order.
  template <typename Fn>
  void each_output(Fn&& fn) const {
    const size_t n = axes.size();
    int64_t o_idx[8] = {0};
    size_t out_total = 1;
    for (const auto& a : axes) out_total *= static_cast<size_t>(a.out);
    for (size_t o = 0; o < out_total; ++o) {
      int64_t padded = 1;
      for (size_t d = 0; d < n; ++d) padded *= axes[d].padded(o_idx[d]);
      auto taps = [&](auto&& g) {
        int64_t first[8], count[8], t[8];
        for (size_t d = 0; d < n; ++d) {
          first[d] = axes[d].first(o_idx[d]);
          count[d] = axes[d].count(o_idx[d]);
          t[d] = 0;
          if (count[d] == 0) return;  // the window lies entirely in the padding
        }
        const int64_t last_dil = axes[n - 1].dilation;
        for (;;) {
          int64_t row = 0, col = 0;
          for (size_t d = 0; d + 1 < n; ++d) {
            const int64_t x = first[d] + t[d] * axes[d].dilation;
            row += x * in_strides[d];
            col += x * col_strides[d];
          }
          for (int64_t j = 0; j < count[n - 1]; ++j) {
            const int64_t x = first[n - 1] + j * last_dil;
            g(row + x, col + x * col_strides[n - 1]);
          }
          size_t d = n - 1;
          for (;;) {
            if (d == 0) return;
            --d;
            if (++t[d] < count[d]) break;
            t[d] = 0;
          }
        }
      };
      fn(o, padded, taps);
      for (size_t d = n; d-- > 0;) {
        if (++o_idx[d] < axes[d].out) break;
        o_idx[d] = 0;
      }
    }
  }
};

class PoolKernel : public Kernel {
 public:
  PoolKernel(PoolKind kind, PoolAttributes attrs, bool count_include_pad, int64_t storage_order, double p)
      : kind_(kind), attrs_(std::move(attrs)), count_include_pad_(count_include_pad), storage_order_(storage_order), p_(p) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const DType dt = x.dtype();
    const bool integer_ok = kind_ == PoolKind::Max && (dt == DType::Int8 || dt == DType::UInt8);
    if (!dtype_is_float(dt) && !integer_ok) return make_error("unsupported input type " + std::string(dtype_name(dt)));
    REDUCE_ASSIGN(auto axes, pool_axes(attrs_, x.shape()));
    Shape out_shape{x.shape()[0], x.shape()[1]};
    for (const auto& a : axes) out_shape.push_back(a.out);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), out_shape));
    Tensor* indices = nullptr;
    if (kind_ == PoolKind::Max && ctx.output_count() > 1) {
      REDUCE_ASSIGN(indices, ctx.allocate_output(1, DType::Int64, out_shape));
    }
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int8_t> ||
                    std::is_same_v<T, uint8_t>)
        run<T>(wx, out, indices, axes);
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, dt));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  template <typename T>
  void run(const Tensor& x, Tensor& out, Tensor* indices, const std::vector<PoolAxis>& axes) const {
    const size_t planes = static_cast<size_t>(x.shape()[0] * x.shape()[1]);
    size_t in_plane = 1, out_plane = 1;
    for (const auto& a : axes) {
      in_plane *= static_cast<size_t>(a.in);
      out_plane *= static_cast<size_t>(a.out);
    }
    const T* in = x.data<T>().data();
    T* o = out.mutable_data<T>().data();
    int64_t* idx = indices ? indices->mutable_data<int64_t>().data() : nullptr;
    const PlaneWalker walker(axes);
    const size_t grain = std::max<size_t>(1, 16384 / std::max<size_t>(1, out_plane));
    parallel_for(planes, grain, [&](size_t begin, size_t end) {
      for (size_t plane = begin; plane < end; ++plane) {
        const T* src = in + plane * in_plane;
        T* dst = o + plane * out_plane;
        const int64_t base = static_cast<int64_t>(plane * in_plane);
        walker.each_output([&](size_t oi, int64_t padded, auto&& taps) {
          if (kind_ == PoolKind::Max) {
            T best = std::numeric_limits<T>::lowest();
            if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
            int64_t best_row = -1, best_col = -1;
            taps([&](int64_t row, int64_t col) {
              // The first NaN wins so that NaN propagates, as a max over the window does in the spec.
              const T v = src[row];
              bool nan_first = false;  // only floating types have NaN
              if constexpr (std::is_floating_point_v<T>) nan_first = std::isnan(v) && !std::isnan(best);
              if (best_row < 0 || v > best || nan_first) {
                best = v;
                best_row = row;
                best_col = col;
              }
            });
            dst[oi] = best;
            if (idx) idx[plane * out_plane + oi] = base + std::max<int64_t>(0, storage_order_ ? best_col : best_row);
          } else if (kind_ == PoolKind::Average) {
            double sum = 0;
            int64_t count = 0;
            taps([&](int64_t row, int64_t) {
              sum += static_cast<double>(src[row]);
              ++count;
            });
            const double divisor = static_cast<double>(count_include_pad_ ? padded : count);
            dst[oi] = static_cast<T>(sum / divisor);
          } else {
            double sum = 0;
            taps([&](int64_t row, int64_t) { sum += std::pow(std::abs(static_cast<double>(src[row])), p_); });
            dst[oi] = static_cast<T>(std::pow(sum, 1.0 / p_));
          }
        });
      }
    });
  }

  PoolKind kind_;
  PoolAttributes attrs_;
  bool count_include_pad_;
  int64_t storage_order_;
  double p_;
};

}  // namespace

Expected<KernelPtr> make_average_pool(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(auto attrs, read_pool_attributes(node, opset >= 19, opset >= 10));
  return KernelPtr(new PoolKernel(PoolKind::Average, std::move(attrs), attr_int(node, "count_include_pad", 0) != 0, 0, 0));
}

Expected<KernelPtr> make_max_pool(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(auto attrs, read_pool_attributes(node, opset >= 10, opset >= 10));
  const int64_t order = attr_int(node, "storage_order", 0);
  if (order != 0 && order != 1) return make_error("storage_order must be 0 or 1");
  return KernelPtr(new PoolKernel(PoolKind::Max, std::move(attrs), false, order, 0));
}

// LpPool: `p` was a float in opset 1 and an int since opset 2.
Expected<KernelPtr> make_lp_pool(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(auto attrs, read_pool_attributes(node, opset >= 18, opset >= 18));
  const Attribute* pa = node.attribute("p");
  double p = 2;
  if (pa) p = pa->kind == Attribute::Kind::Float ? pa->f : static_cast<double>(pa->i);
  if (!(p > 0) || !std::isfinite(p)) return make_error("p must be positive");
  return KernelPtr(new PoolKernel(PoolKind::Lp, std::move(attrs), false, 0, p));
}

}  // namespace reduce::ref
