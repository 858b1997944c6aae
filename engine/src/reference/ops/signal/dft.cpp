// DFT and STFT: direct discrete Fourier transforms accumulated in double (real or complex input, [..., 2] output).
#include <cmath>
#include <numbers>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// cos and sin of 2*pi*m/length for m in [0, length): exact twiddles indexed by (j*k) mod length.
struct Twiddles {
  std::vector<double> re, im;
  explicit Twiddles(size_t length) : re(length), im(length) {
    for (size_t m = 0; m < length; ++m) {
      const double a = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(length);
      re[m] = std::cos(a);
      im[m] = std::sin(a);
    }
  }
};

// X[k] = sum_j x[j] * exp(-+2*pi*i*j*k/L) for k < bins; x has n <= L samples (the rest are zero).
// Inverse uses the + sign and divides by L.
void transform(const double* xr, const double* xi, size_t n, size_t length, size_t bins, bool inverse, const Twiddles& tw,
               double* yr, double* yi) {
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    size_t m = 0;  // (j * k) mod length, advanced incrementally
    for (size_t j = 0; j < n; ++j) {
      const double c = tw.re[m], s = sign * tw.im[m];
      sr += xr[j] * c - xi[j] * s;
      si += xr[j] * s + xi[j] * c;
      m += k;
      if (m >= length) m %= length;
    }
    if (inverse) {
      sr /= static_cast<double>(length);
      si /= static_cast<double>(length);
    }
    yr[k] = sr;
    yi[k] = si;
  }
}

Expected<int64_t> scalar_int(const Tensor& t, const char* what) {
  if (t.elements() != 1) return make_error(std::string(what) + " must be a scalar, got " + shape_to_string(t.shape()));
  if (t.dtype() == DType::Int64) return t.data<int64_t>()[0];
  if (t.dtype() == DType::Int32) return static_cast<int64_t>(t.data<int32_t>()[0]);
  return make_error(std::string(what) + " must be int32 or int64");
}

// Element offset of sample j of a line of `x` whose last dim holds 1 (real) or 2 (complex) values.
struct Lines {
  size_t outer, n, inner, comps;
};

// Reads sample j of a line into xr/xi. A Hermitian line (the inverse of a one-sided spectrum) holds only
// bins [0, n): bin j > length/2 is the conjugate of bin length - j, and bins past n are zero.
template <typename T>
void read_sample(const T* in, const Lines& in_l, size_t o, size_t i, size_t j, size_t length, bool hermitian,
                 double& re, double& im) {
  const bool mirrored = hermitian && j > length / 2;
  const size_t src = mirrored ? length - j : j;
  if (src >= in_l.n) {
    re = im = 0.0;
    return;
  }
  const T* p = in + ((o * in_l.n + src) * in_l.inner + i) * in_l.comps;
  re = static_cast<double>(p[0]);
  im = in_l.comps == 2 ? static_cast<double>(p[1]) : 0.0;
  if (mirrored) im = -im;
}

// Transforms every line of wx (float or double) along the middle dim of `in`. The output holds `bins`
// values per line, complex, or only the real part when `hermitian` (the inverse of a Hermitian
// spectrum is real: the imaginary parts of bins 0 and length/2 do not contribute to it).
template <typename T>
void transform_lines(const T* in, T* out, const Lines& in_l, size_t length, size_t bins, bool inverse, bool hermitian) {
  const Twiddles tw(length);
  const size_t lines = in_l.outer * in_l.inner;
  const size_t n = hermitian ? length : std::min(in_l.n, length);
  const size_t out_comps = hermitian ? 1 : 2;
  parallel_for(lines, std::max<size_t>(1, 65536 / std::max<size_t>(1, n * bins)), [&](size_t b, size_t e) {
    std::vector<double> xr(n), xi(n), yr(bins), yi(bins);
    for (size_t line = b; line < e; ++line) {
      const size_t o = line / in_l.inner, i = line % in_l.inner;
      for (size_t j = 0; j < n; ++j) read_sample(in, in_l, o, i, j, length, hermitian, xr[j], xi[j]);
      transform(xr.data(), xi.data(), n, length, bins, inverse, tw, yr.data(), yi.data());
      for (size_t k = 0; k < bins; ++k) {
        T* q = out + ((o * bins + k) * in_l.inner + i) * out_comps;
        q[0] = static_cast<T>(yr[k]);
        if (!hermitian) q[1] = static_cast<T>(yi[k]);
      }
    }
  });
}

class DftKernel : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided, bool axis_input)
      : axis_(axis), inverse_(inverse), onesided_(onesided), axis_input_(axis_input) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    const int64_t r = static_cast<int64_t>(x.rank());
    if (r < 2) return make_error("input must have rank at least 2");
    const int64_t comps = x.shape().back();
    if (comps != 1 && comps != 2) return make_error("the last dim must be 1 (real) or 2 (complex), got " + std::to_string(comps));
    int64_t axis = axis_;
    if (axis_input_) {
      if (const Tensor* a = ctx.input(2)) {
        REDUCE_ASSIGN(axis, scalar_int(*a, "axis"));
      }
    }
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r - 2) return make_error("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
    const size_t ax = static_cast<size_t>(axis);
    // onesided with inverse is the inverse of a real signal's one-sided spectrum (irfft): the input holds
    // length/2 + 1 bins (by default length = 2 * (bins - 1)) and the output is real.
    const bool hermitian = onesided_ && inverse_;
    if (hermitian && comps != 2) return make_error("a one-sided inverse needs a complex input");
    int64_t length = hermitian ? 2 * (x.shape()[ax] - 1) : x.shape()[ax];
    if (const Tensor* l = ctx.input(1)) {
      REDUCE_ASSIGN(length, scalar_int(*l, "dft_length"));
      if (length <= 0) return make_error("dft_length must be positive, got " + std::to_string(length));
    }
    if (length <= 0) return make_error("cannot transform an axis of " + std::to_string(x.shape()[ax]) + " elements");
    const int64_t bins = onesided_ && !inverse_ ? length / 2 + 1 : length;
    Shape out_shape = x.shape();
    out_shape[ax] = bins;
    out_shape.back() = hermitian ? 1 : 2;
    Lines l{1, static_cast<size_t>(x.shape()[ax]), 1, static_cast<size_t>(comps)};
    for (size_t d = 0; d < ax; ++d) l.outer *= static_cast<size_t>(x.shape()[d]);
    for (size_t d = ax + 1; d + 1 < x.rank(); ++d) l.inner *= static_cast<size_t>(x.shape()[d]);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), out_shape));
    // The twiddle table has `length` entries: bound it like a tensor before building it.
    REDUCE_TRY(Tensor::allocate(DType::Double, {length}));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>)
        transform_lines<T>(wx.data<T>().data(), out.mutable_data<T>().data(), l, static_cast<size_t>(length),
                           static_cast<size_t>(bins), inverse_, hermitian);
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  int64_t axis_;
  bool inverse_, onesided_, axis_input_;
};

// STFT: frames of frame_length samples every frame_step, multiplied by the window, each transformed.
class StftKernel : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() != 3 || (x.shape()[2] != 1 && x.shape()[2] != 2))
      return make_error("signal must have shape [batch, length, 1 or 2], got " + shape_to_string(x.shape()));
    REDUCE_ASSIGN(int64_t step, scalar_int(*ctx.input(1), "frame_step"));
    if (step <= 0) return make_error("frame_step must be positive");
    const Tensor* window = ctx.input(2);
    if (window && window->rank() != 1) return make_error("window must be 1-D");
    int64_t frame = window ? window->shape()[0] : x.shape()[1];
    if (const Tensor* fl = ctx.input(3)) {
      REDUCE_ASSIGN(frame, scalar_int(*fl, "frame_length"));
      if (window && window->shape()[0] != frame)
        return make_error("window length " + std::to_string(window->shape()[0]) + " differs from frame_length " + std::to_string(frame));
    }
    const int64_t signal = x.shape()[1];
    if (frame <= 0 || frame > signal)
      return make_error("frame_length " + std::to_string(frame) + " must be in [1, " + std::to_string(signal) + "]");
    const int64_t frames = 1 + (signal - frame) / step;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const size_t comps = static_cast<size_t>(x.shape()[2]);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    std::vector<double> w(static_cast<size_t>(frame), 1.0);
    if (window) {
      REDUCE_ASSIGN(Tensor ww, widen(*window));
      for (size_t k = 0; k < w.size(); ++k) w[k] = ww.element_as_double(k);
    }
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), {x.shape()[0], frames, bins, 2}));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        const size_t n = static_cast<size_t>(frame), nb = static_cast<size_t>(bins);
        const Twiddles tw(n);
        const size_t total = static_cast<size_t>(x.shape()[0] * frames);
        parallel_for(total, std::max<size_t>(1, 65536 / (n * nb)), [&](size_t b, size_t e) {
          std::vector<double> xr(n), xi(n), yr(nb), yi(nb);
          for (size_t t = b; t < e; ++t) {
            const size_t batch = t / static_cast<size_t>(frames), f = t % static_cast<size_t>(frames);
            const T* p = in + (batch * static_cast<size_t>(signal) + f * static_cast<size_t>(step)) * comps;
            for (size_t j = 0; j < n; ++j) {
              xr[j] = static_cast<double>(p[j * comps]) * w[j];
              xi[j] = comps == 2 ? static_cast<double>(p[j * comps + 1]) * w[j] : 0.0;
            }
            transform(xr.data(), xi.data(), n, n, nb, false, tw, yr.data(), yi.data());
            for (size_t k = 0; k < nb; ++k) {
              o[(t * nb + k) * 2] = static_cast<T>(yr[k]);
              o[(t * nb + k) * 2 + 1] = static_cast<T>(yi[k]);
            }
          }
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  bool onesided_;
};

}  // namespace

Expected<KernelPtr> make_dft(const Node& node, int64_t opset) {
  const int64_t inverse = attr_int(node, "inverse", 0), onesided = attr_int(node, "onesided", 0);
  if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1)) return make_error("inverse and onesided must be 0 or 1");
  // Opset 20 moved axis to an input (default -2); opset 17 has the attribute (default 1).
  const bool axis_input = opset >= 20;
  if (axis_input && node.attribute("axis")) return make_error("axis is an input in this opset, not an attribute");
  return KernelPtr(new DftKernel(axis_input ? -2 : attr_int(node, "axis", 1), inverse == 1, onesided == 1, axis_input));
}

Expected<KernelPtr> make_stft(const Node& node, int64_t) {
  const int64_t onesided = attr_int(node, "onesided", 1);
  if (onesided != 0 && onesided != 1) return make_error("onesided must be 0 or 1");
  return KernelPtr(new StftKernel(onesided == 1));
}

}  // namespace reduce::ref
