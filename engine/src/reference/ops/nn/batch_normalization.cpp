// BatchNormalization: inference with running statistics; opset 14+ training_mode with batch statistics.
#include <cmath>
#include <type_traits>

#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class BatchNormKernel : public Kernel {
 public:
  BatchNormKernel(double epsilon, double momentum, bool training) : eps_(epsilon), momentum_(momentum), training_(training) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() < 2) return make_error("input must have rank at least 2, got " + shape_to_string(x.shape()));
    const size_t batch = static_cast<size_t>(x.shape()[0]);
    const size_t channels = static_cast<size_t>(x.shape()[1]);
    size_t spatial = 1;
    for (size_t d = 2; d < x.rank(); ++d) spatial *= static_cast<size_t>(x.shape()[d]);

    const char* names[] = {"scale", "B", "input_mean", "input_var"};
    std::vector<double> p[4];
    for (size_t i = 0; i < 4; ++i) {
      const Tensor* t = ctx.input(i + 1);
      if (!t) return make_error(std::string(names[i]) + " is missing");
      REDUCE_ASSIGN(p[i], float_values(*t, names[i]));
      // Per channel, or (opset < 9 with spatial=0) per activation: one value per element of a sample.
      if (p[i].size() != channels && p[i].size() != channels * spatial)
        return make_error(std::string(names[i]) + " has shape " + shape_to_string(t->shape()) + ", expected [" +
                          std::to_string(channels) + "]");
    }
    std::vector<double>& scale = p[0];
    std::vector<double>& bias = p[1];
    std::vector<double> mean = p[2], var = p[3];
    if (training_) REDUCE_TRY(batch_statistics(ctx, x, batch, channels, spatial, mean, var));

    // Fold the four parameters into y = (x - m) * a + b, per channel or (spatial=0) per activation.
    const bool per_activation = scale.size() != channels || bias.size() != channels || mean.size() != channels ||
                                var.size() != channels;
    const size_t groups = per_activation ? channels * spatial : channels;
    auto at = [&](const std::vector<double>& v, size_t g) { return v.size() == groups ? v[g] : v[g / spatial]; };
    std::vector<double> fa(groups), fm(groups), fb(groups);
    for (size_t g = 0; g < groups; ++g) {
      fa[g] = at(scale, g) / std::sqrt(at(var, g) + eps_);
      fm[g] = at(mean, g);
      fb[g] = at(bias, g);
    }

    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        // One plane (sample, channel) per index, each written by exactly one chunk.
        parallel_for(batch * channels, std::max<size_t>(1, 16384 / std::max<size_t>(spatial, 1)), [&](size_t b, size_t e) {
          for (size_t plane = b; plane < e; ++plane) {
            const size_t c = plane % channels;
            const T* xi = in + plane * spatial;
            T* yi = o + plane * spatial;
            if (!per_activation) {
              const double a = fa[c], m = fm[c], bb = fb[c];
              for (size_t s = 0; s < spatial; ++s) yi[s] = static_cast<T>((static_cast<double>(xi[s]) - m) * a + bb);
            } else {
              const size_t g0 = c * spatial;
              for (size_t s = 0; s < spatial; ++s)
                yi[s] = static_cast<T>((static_cast<double>(xi[s]) - fm[g0 + s]) * fa[g0 + s] + fb[g0 + s]);
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
  // Training mode: normalizes with the batch mean and (biased) variance; outputs 1 and 2 are the
  // running statistics updated with momentum.
  Status batch_statistics(KernelContext& ctx, const Tensor& x, size_t batch, size_t channels, size_t spatial,
                          std::vector<double>& mean, std::vector<double>& var) const {
    if (mean.size() != channels || var.size() != channels)
      return make_error("training mode needs per-channel mean and variance");
    REDUCE_ASSIGN(Tensor wx, widen(x));
    std::vector<double> bm(channels, 0), bv(channels, 0);
    const double count = static_cast<double>(batch * spatial);
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        parallel_for(channels, 1, [&](size_t b, size_t e) {
          for (size_t c = b; c < e; ++c) {
            double sum = 0;
            for (size_t n = 0; n < batch; ++n)
              for (size_t s = 0; s < spatial; ++s) sum += static_cast<double>(in[(n * channels + c) * spatial + s]);
            bm[c] = sum / count;
            double sq = 0;
            for (size_t n = 0; n < batch; ++n)
              for (size_t s = 0; s < spatial; ++s) {
                const double d = static_cast<double>(in[(n * channels + c) * spatial + s]) - bm[c];
                sq += d * d;
              }
            bv[c] = sq / count;
          }
        });
      }
    });
    const DType stat_types[] = {ctx.input(3)->dtype(), ctx.input(4)->dtype()};
    for (size_t k = 1; k < ctx.output_count() && k < 3; ++k) {
      const std::vector<double>& running = k == 1 ? mean : var;
      const std::vector<double>& current = k == 1 ? bm : bv;
      REDUCE_ASSIGN(Tensor f, Tensor::allocate(DType::Double, {static_cast<int64_t>(channels)}));
      auto fd = f.mutable_data<double>();
      for (size_t c = 0; c < channels; ++c) fd[c] = running[c] * momentum_ + current[c] * (1 - momentum_);
      REDUCE_ASSIGN(Tensor* o, ctx.allocate_output(k, stat_types[k - 1], {static_cast<int64_t>(channels)}));
      for (size_t c = 0; c < channels; ++c) {
        switch (o->dtype()) {
          case DType::Float: o->mutable_data<float>()[c] = static_cast<float>(fd[c]); break;
          case DType::Double: o->mutable_data<double>()[c] = fd[c]; break;
          case DType::Float16: o->mutable_data<uint16_t>()[c] = float_to_half(static_cast<float>(fd[c])); break;
          default: o->mutable_data<uint16_t>()[c] = float_to_bfloat16(static_cast<float>(fd[c])); break;
        }
      }
    }
    mean = std::move(bm);
    var = std::move(bv);
    return {};
  }

  double eps_;
  double momentum_;
  bool training_;
};

}  // namespace

Expected<KernelPtr> make_batch_normalization(const Node& node, int64_t opset) {
  bool training = false;
  if (opset >= 14) {
    const int64_t mode = attr_int(node, "training_mode", 0);
    if (mode != 0 && mode != 1) return make_error("training_mode must be 0 or 1");
    training = mode == 1;
  } else {
    // Before opset 14 training was signalled by is_test=0 (opset < 7) or by the extra outputs.
    size_t outputs = 0;
    for (const auto& o : node.outputs) outputs += !o.empty();
    if (attr_int(node, "is_test", 1) == 0 || outputs > 1)
      return make_error("training mode before opset 14 is not supported");
  }
  if (!training && node.outputs.size() > 1 && opset >= 14) {
    for (size_t k = 1; k < node.outputs.size(); ++k)
      if (!node.outputs[k].empty()) return make_error("running statistics outputs need training_mode=1");
  }
  return KernelPtr(new BatchNormKernel(attr_float(node, "epsilon", 1e-5f), attr_float(node, "momentum", 0.9f), training));
}

}  // namespace reduce::ref
