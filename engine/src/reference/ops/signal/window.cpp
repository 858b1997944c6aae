// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix: tensors generated from scalar inputs.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Window { Hann, Hamming, Blackman };

Expected<int64_t> scalar_int(const Tensor* t, const char* what) {
  if (!t || t->elements() != 1) return make_error(std::string(what) + " must be a scalar");
  if (t->dtype() == DType::Int64) return t->data<int64_t>()[0];
  if (t->dtype() == DType::Int32) return static_cast<int64_t>(t->data<int32_t>()[0]);
  return make_error(std::string(what) + " must be int32 or int64");
}

Expected<double> scalar_float(const Tensor* t, const char* what) {
  if (!t || t->elements() != 1 || !dtype_is_float(t->dtype()))
    return make_error(std::string(what) + " must be a floating-point scalar");
  return t->element_as_double(0);
}

// Writes double values into a new tensor of `dtype` (float types rounded once, integers truncated).
Expected<Tensor> tensor_of(DType dtype, Shape shape, const std::vector<double>& v) {
  const DType compute = is_half(dtype) ? DType::Float : dtype;
  if (dtype_size(dtype) == 0 || dtype == DType::Bool || dtype == DType::Complex64 || dtype == DType::Complex128)
    return make_error("unsupported output_datatype " + std::string(dtype_name(dtype)));
  REDUCE_ASSIGN(Tensor t, Tensor::allocate(compute, std::move(shape)));
  visit_dtype(compute, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      auto o = t.mutable_data<T>();
      for (size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>) o[i] = static_cast<T>(v[i]);
        else o[i] = std::isfinite(v[i]) ? static_cast<T>(static_cast<int64_t>(v[i])) : T(0);  // windows lie in [0, 1]
      }
    }
  });
  return narrow(t, dtype);
}

Expected<DType> output_type(const Node& node) {
  auto t = dtype_from_onnx(static_cast<int32_t>(attr_int(node, "output_datatype", 1)));
  if (!t || dtype_is_small_float(*t) || dtype_is_small_int(*t)) return make_error("unsupported output_datatype");
  return *t;
}

class WindowKernel : public Kernel {
 public:
  WindowKernel(Window kind, bool periodic, DType dtype) : kind_(kind), periodic_(periodic), dtype_(dtype) {}
  Status compute(KernelContext& ctx) const override {
    REDUCE_ASSIGN(int64_t size, scalar_int(ctx.input(0), "size"));
    if (size < 0) return make_error("size must not be negative, got " + std::to_string(size));
    REDUCE_TRY(Tensor::allocate(dtype_, {size}));  // bounds the size before building the values
    // A periodic window of N is the symmetric window of N + 1 without its last sample.
    const double denom = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> v(static_cast<size_t>(size), 1.0);
    for (size_t n = 0; n < v.size() && denom > 0; ++n) {
      const double a = 2.0 * std::numbers::pi * static_cast<double>(n) / denom;
      switch (kind_) {
        case Window::Hann: v[n] = 0.5 - 0.5 * std::cos(a); break;
        case Window::Hamming: v[n] = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(a); break;
        case Window::Blackman: v[n] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a); break;
      }
    }
    REDUCE_ASSIGN(Tensor out, tensor_of(dtype_, {size}, v));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  Window kind_;
  bool periodic_;
  DType dtype_;
};

// Triangular filters between mel-spaced edges, mapped to spectrogram bins [dft_length/2 + 1, num_mel_bins].
class MelWeightMatrixKernel : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType dtype) : dtype_(dtype) {}
  Status compute(KernelContext& ctx) const override {
    REDUCE_ASSIGN(int64_t mels, scalar_int(ctx.input(0), "num_mel_bins"));
    REDUCE_ASSIGN(int64_t dft_length, scalar_int(ctx.input(1), "dft_length"));
    REDUCE_ASSIGN(int64_t rate, scalar_int(ctx.input(2), "sample_rate"));
    REDUCE_ASSIGN(double lower, scalar_float(ctx.input(3), "lower_edge_hertz"));
    REDUCE_ASSIGN(double upper, scalar_float(ctx.input(4), "upper_edge_hertz"));
    if (mels <= 0 || dft_length <= 0 || rate <= 0) return make_error("num_mel_bins, dft_length and sample_rate must be positive");
    if (lower < 0 || upper < lower) return make_error("need 0 <= lower_edge_hertz <= upper_edge_hertz");
    const int64_t spectrum = dft_length / 2 + 1;
    REDUCE_TRY(Tensor::allocate(DType::Double, {spectrum, mels}));  // bounds the size first
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double lo = to_mel(lower), hi = to_mel(upper);
    const double step = (hi - lo) / static_cast<double>(mels + 2);
    std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
    for (size_t i = 0; i < edge.size(); ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo) / 2595.0) - 1.0);
      edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate)));
      // Left and center edges index a bin; the last right edge only bounds a loop.
      const int64_t limit = i + 1 == edge.size() ? spectrum + 1 : spectrum;
      if (edge[i] < 0 || edge[i] >= limit)
        return make_error("upper_edge_hertz " + std::to_string(upper) + " maps beyond the " + std::to_string(spectrum) +
                          " spectrogram bins");
    }
    const size_t cols = static_cast<size_t>(mels);
    std::vector<double> w(static_cast<size_t>(spectrum) * cols, 0.0);
    for (size_t i = 0; i < cols; ++i) {
      const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
      if (center == left) {
        w[static_cast<size_t>(center) * cols + i] = 1;
      } else {
        for (int64_t j = left; j <= center; ++j)
          w[static_cast<size_t>(j) * cols + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
      for (int64_t j = center; j < right; ++j)
        w[static_cast<size_t>(j) * cols + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
    REDUCE_ASSIGN(Tensor out, tensor_of(dtype_, {spectrum, mels}, w));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  DType dtype_;
};

Expected<KernelPtr> make_window(Window kind, const Node& node) {
  REDUCE_ASSIGN(DType dtype, output_type(node));
  return KernelPtr(new WindowKernel(kind, attr_int(node, "periodic", 1) != 0, dtype));
}

}  // namespace

Expected<KernelPtr> make_hann_window(const Node& n, int64_t) { return make_window(Window::Hann, n); }
Expected<KernelPtr> make_hamming_window(const Node& n, int64_t) { return make_window(Window::Hamming, n); }
Expected<KernelPtr> make_blackman_window(const Node& n, int64_t) { return make_window(Window::Blackman, n); }
Expected<KernelPtr> make_mel_weight_matrix(const Node& node, int64_t) {
  REDUCE_ASSIGN(DType dtype, output_type(node));
  return KernelPtr(new MelWeightMatrixKernel(dtype));
}

}  // namespace reduce::ref
