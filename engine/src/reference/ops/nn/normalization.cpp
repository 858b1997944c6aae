// InstanceNormalization, LayerNormalization, GroupNormalization, RMSNormalization: normalize contiguous rows, then
// scale and shift.
#include <cmath>
#include <type_traits>

#include "reference/broadcast.h"
#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// Mean and 1/sqrt(variance + epsilon) of a contiguous row, in double (biased variance). Uncentered
// (RMSNormalization), the mean is taken as 0: the variance is the mean of the squares.
template <typename T>
std::pair<double, double> row_statistics(const T* x, size_t n, double eps, bool centered) {
  double sum = 0;
  if (centered)
    for (size_t k = 0; k < n; ++k) sum += static_cast<double>(x[k]);
  const double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (size_t k = 0; k < n; ++k) {
    const double d = static_cast<double>(x[k]) - mean;
    sq += d * d;
  }
  return {mean, 1.0 / std::sqrt(sq / static_cast<double>(n) + eps)};
}

// Normalizes `rows` contiguous rows of n elements of x into y; affine(row, k) gives {scale, bias} of
// element k of a row. stats, when given, receives {mean, inv_std} per row.
template <typename Affine>
Expected<Tensor> normalize_rows(const Tensor& x, size_t rows, size_t n, double eps, Affine&& affine,
                                std::vector<std::pair<double, double>>* stats = nullptr, bool centered = true) {
  if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
  REDUCE_ASSIGN(Tensor wx, widen(x));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
  if (stats) stats->assign(rows, {0.0, 0.0});
  visit_dtype(wx.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = wx.data<T>().data();
      T* o = out.mutable_data<T>().data();
      if (n == 0) return;
      parallel_for(rows, std::max<size_t>(1, 16384 / n), [&](size_t b, size_t e) {
        for (size_t r = b; r < e; ++r) {
          const auto [mean, inv] = row_statistics(in + r * n, n, eps, centered);
          if (stats) (*stats)[r] = {mean, inv};
          for (size_t k = 0; k < n; ++k) {
            const auto [s, bias] = affine(r, k);
            o[r * n + k] = static_cast<T>((static_cast<double>(in[r * n + k]) - mean) * inv * s + bias);
          }
        }
      });
    }
  });
  return narrow(out, x.dtype());
}

// A scale or bias of LayerNormalization/RMSNormalization broadcast (unidirectionally) to the normalized
// shape X.shape[axis:] of n elements; `fallback` everywhere when the input is omitted.
Expected<std::vector<double>> normalized_param(const Tensor* t, const char* what, double fallback,
                                               const Shape& norm_shape, size_t n) {
  if (!t) return std::vector<double>(n, fallback);
  REDUCE_ASSIGN(auto v, float_values(*t, what));
  const Shape shapes[] = {t->shape(), norm_shape};
  auto b = broadcast_shapes(shapes);
  if (!b.ok() || *b != norm_shape)
    return make_error(std::string(what) + " of shape " + shape_to_string(t->shape()) + " does not broadcast to " +
                      shape_to_string(norm_shape));
  std::vector<double> full(n);
  for_each_broadcast2(norm_shape, t->shape(), t->shape(), [&](size_t o, size_t a, size_t) { full[o] = v[a]; });
  return full;
}

// X normalized over its dims from `axis` on (LayerNormalization, RMSNormalization): the axis, the
// shape of those dims, how many rows and how long each.
struct NormalizedRows {
  size_t axis = 0;
  Shape norm_shape;
  size_t rows = 1, n = 1;
};

Expected<NormalizedRows> rows_from_axis(const Tensor& x, int64_t axis) {
  if (x.rank() == 0) return make_error("input must have rank at least 1");
  NormalizedRows r;
  REDUCE_ASSIGN(r.axis, normalize_axis(axis, x.rank()));
  r.norm_shape.assign(x.shape().begin() + static_cast<ptrdiff_t>(r.axis), x.shape().end());
  for (size_t d = 0; d < x.rank(); ++d) (d < r.axis ? r.rows : r.n) *= static_cast<size_t>(x.shape()[d]);
  return r;
}

Status check_size(const std::vector<double>& v, size_t n, const char* what) {
  if (v.size() != n) return make_error(std::string(what) + " must have " + std::to_string(n) + " elements, got " +
                                       std::to_string(v.size()));
  return {};
}

class InstanceNormKernel : public Kernel {
 public:
  explicit InstanceNormKernel(double eps) : eps_(eps) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return make_error("input must have rank at least 2");
    const size_t channels = static_cast<size_t>(x.shape()[1]);
    REDUCE_ASSIGN(auto scale, float_values(*ctx.input(1), "scale"));
    REDUCE_ASSIGN(auto bias, float_values(*ctx.input(2), "B"));
    REDUCE_TRY(check_size(scale, channels, "scale"));
    REDUCE_TRY(check_size(bias, channels, "B"));
    size_t spatial = 1;
    for (size_t d = 2; d < x.rank(); ++d) spatial *= static_cast<size_t>(x.shape()[d]);
    const size_t rows = static_cast<size_t>(x.shape()[0]) * channels;
    REDUCE_ASSIGN(Tensor y, normalize_rows(x, rows, spatial, eps_, [&](size_t r, size_t) {
      return std::pair{scale[r % channels], bias[r % channels]};
    }));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  double eps_;
};

class GroupNormKernel : public Kernel {
 public:
  GroupNormKernel(double eps, int64_t groups, bool per_channel) : eps_(eps), groups_(groups), per_channel_(per_channel) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return make_error("input must have rank at least 2");
    const size_t channels = static_cast<size_t>(x.shape()[1]);
    const size_t groups = static_cast<size_t>(groups_);
    if (channels % groups != 0)
      return make_error("num_groups " + std::to_string(groups) + " does not divide " + std::to_string(channels) + " channels");
    REDUCE_ASSIGN(auto scale, float_values(*ctx.input(1), "scale"));
    REDUCE_ASSIGN(auto bias, float_values(*ctx.input(2), "bias"));
    REDUCE_TRY(check_size(scale, per_channel_ ? channels : groups, "scale"));
    REDUCE_TRY(check_size(bias, per_channel_ ? channels : groups, "bias"));
    size_t spatial = 1;
    for (size_t d = 2; d < x.rank(); ++d) spatial *= static_cast<size_t>(x.shape()[d]);
    const size_t per_group = channels / groups;
    const size_t rows = static_cast<size_t>(x.shape()[0]) * groups;
    REDUCE_ASSIGN(Tensor y, normalize_rows(x, rows, per_group * spatial, eps_, [&](size_t r, size_t k) {
      const size_t g = r % groups;
      const size_t i = per_channel_ ? g * per_group + k / spatial : g;
      return std::pair{scale[i], bias[i]};
    }));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  double eps_;
  int64_t groups_;
  bool per_channel_;
};

class LayerNormKernel : public Kernel {
 public:
  LayerNormKernel(int64_t axis, double eps, DType stash) : axis_(axis), eps_(eps), stash_(stash) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    REDUCE_ASSIGN(const NormalizedRows r, rows_from_axis(x, axis_));
    const size_t axis = r.axis, rows = r.rows, n = r.n;
    const Shape& norm_shape = r.norm_shape;
    REDUCE_ASSIGN(auto scale, normalized_param(ctx.input(1), "Scale", 1.0, norm_shape, n));
    REDUCE_ASSIGN(auto bias, normalized_param(ctx.input(2), "B", 0.0, norm_shape, n));
    std::vector<std::pair<double, double>> stats;
    REDUCE_ASSIGN(Tensor y, normalize_rows(x, rows, n, eps_, [&](size_t, size_t k) { return std::pair{scale[k], bias[k]}; },
                                           &stats));
    ctx.set_output(0, std::move(y));
    // Mean and InvStdDev: X's shape with the normalized dims set to 1, in the stash type.
    Shape stat_shape(x.shape().begin(), x.shape().begin() + static_cast<ptrdiff_t>(axis));
    stat_shape.resize(x.rank(), 1);
    for (size_t k = 1; k < 3 && k < ctx.output_count(); ++k) {
      REDUCE_ASSIGN(Tensor* o, ctx.allocate_output(k, stash_, stat_shape));
      for (size_t r = 0; r < rows; ++r) {
        const double v = k == 1 ? stats[r].first : stats[r].second;
        if (stash_ == DType::Double) o->mutable_data<double>()[r] = v;
        else o->mutable_data<float>()[r] = static_cast<float>(v);
      }
    }
    return {};
  }

 private:
  int64_t axis_;
  double eps_;
  DType stash_;
};

// Y = X / sqrt(mean(X^2 over the dims from axis) + epsilon) * scale: LayerNormalization without centering or bias.
class RMSNormKernel : public Kernel {
 public:
  RMSNormKernel(int64_t axis, double eps) : axis_(axis), eps_(eps) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    REDUCE_ASSIGN(const NormalizedRows r, rows_from_axis(x, axis_));
    const size_t rows = r.rows, n = r.n;
    const Shape& norm_shape = r.norm_shape;
    if (!ctx.input(1)) return make_error("input scale is required");
    REDUCE_ASSIGN(auto scale, normalized_param(ctx.input(1), "scale", 1.0, norm_shape, n));
    REDUCE_ASSIGN(Tensor y, normalize_rows(x, rows, n, eps_, [&](size_t, size_t k) { return std::pair{scale[k], 0.0}; },
                                           nullptr, /*centered=*/false));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  int64_t axis_;
  double eps_;
};

Expected<int64_t> stash_type(const Node& node) {
  const int64_t stash = attr_int(node, "stash_type", 1);
  if (stash != 1 && stash != 11) return make_error("stash_type must be 1 (float) or 11 (double)");
  return stash;
}

}  // namespace

Expected<KernelPtr> make_instance_normalization(const Node& node, int64_t) {
  return KernelPtr(new InstanceNormKernel(attr_float(node, "epsilon", 1e-5f)));
}

Expected<KernelPtr> make_layer_normalization(const Node& node, int64_t) {
  REDUCE_ASSIGN(int64_t stash, stash_type(node));
  return KernelPtr(new LayerNormKernel(attr_int(node, "axis", -1), attr_float(node, "epsilon", 1e-5f),
                                       stash == 11 ? DType::Double : DType::Float));
}

Expected<KernelPtr> make_group_normalization(const Node& node, int64_t opset) {
  const int64_t groups = attr_int(node, "num_groups", 0);
  if (groups <= 0) return make_error("num_groups must be positive");
  // Opset 18 has one scale and bias per group; opset 21 one per channel.
  return KernelPtr(new GroupNormKernel(attr_float(node, "epsilon", 1e-5f), groups, opset >= 21));
}

// Statistics are always accumulated in double, so stash_type only has to be valid.
Expected<KernelPtr> make_rms_normalization(const Node& node, int64_t) {
  REDUCE_TRY(stash_type(node));
  const float eps = attr_float(node, "epsilon", 1e-5f);
  if (!(eps >= 0)) return make_error("epsilon must be a non-negative number");
  return KernelPtr(new RMSNormKernel(attr_int(node, "axis", -1), eps));
}

}  // namespace reduce::ref
