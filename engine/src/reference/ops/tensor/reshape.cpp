// Reshape, Flatten, Squeeze, Unsqueeze: new shapes over the input's storage (no copy).
#include <algorithm>

#include "reference/int_input.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

// The same bytes under another shape; element counts were checked by the caller.
Status set_view(KernelContext& ctx, const Tensor& in, Shape shape) {
  REDUCE_ASSIGN(Tensor out, Tensor::view(in.dtype(), std::move(shape), in.owner(), in.bytes().data(), in.byte_size()));
  ctx.set_output(0, std::move(out));
  return {};
}

// Reshape's target: 0 copies the input dim (unless allowzero), one -1 is inferred.
Expected<Shape> reshape_target(const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  REDUCE_ASSIGN(uint64_t total, element_count(in));
  Shape out(spec.size());
  int64_t infer = -1;
  uint64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer >= 0) return make_error("shape " + shape_to_string(spec) + " has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= in.size())
        return make_error("shape " + shape_to_string(spec) + " copies dim " + std::to_string(i) + " of a rank " +
                          std::to_string(in.size()) + " input");
      d = in[i];
    }
    if (d < 0) return make_error("shape " + shape_to_string(spec) + " has a negative dim");
    out[i] = d;
    if (d != 0 && known > UINT64_MAX / static_cast<uint64_t>(d))
      return make_error("shape " + shape_to_string(spec) + " has too many elements");
    known *= static_cast<uint64_t>(d);
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      return make_error("cannot reshape " + shape_to_string(in) + " to " + shape_to_string(spec));
    out[static_cast<size_t>(infer)] = static_cast<int64_t>(total / known);
  } else if (known != total) {
    return make_error("cannot reshape " + shape_to_string(in) + " to " + shape_to_string(spec));
  }
  return out;
}

class ReshapeKernel : public Kernel {
 public:
  ReshapeKernel(bool from_input, std::vector<int64_t> shape, bool allowzero)
      : from_input_(from_input), shape_(std::move(shape)), allowzero_(allowzero) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    std::vector<int64_t> spec = shape_;
    if (from_input_) {
      if (!ctx.input(1)) return make_error("the shape input is missing");
      REDUCE_ASSIGN(spec, int_values(*ctx.input(1), "shape"));
    }
    REDUCE_ASSIGN(Shape out, reshape_target(in.shape(), spec, allowzero_));
    return set_view(ctx, in, std::move(out));
  }

 private:
  bool from_input_;
  std::vector<int64_t> shape_;
  bool allowzero_;
};

class FlattenKernel : public Kernel {
 public:
  FlattenKernel(int64_t axis, bool negative_ok) : axis_(axis), negative_ok_(negative_ok) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const int64_t r = static_cast<int64_t>(in.rank());
    int64_t axis = axis_;
    if (axis < (negative_ok_ ? -r : 0) || axis > r)
      return make_error("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= in.shape()[static_cast<size_t>(d)];
    return set_view(ctx, in, {outer, inner});
  }

 private:
  int64_t axis_;
  bool negative_ok_;
};

// Axes of Squeeze/Unsqueeze come from an attribute (before opset 13) or an optional input.
class AxesKernel : public Kernel {
 public:
  AxesKernel(bool squeeze, bool from_input, std::vector<int64_t> axes, bool has_axes)
      : squeeze_(squeeze), from_input_(from_input), axes_(std::move(axes)), has_axes_(has_axes) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    std::vector<int64_t> axes = axes_;
    bool has_axes = has_axes_;
    if (from_input_ && ctx.input(1)) {
      REDUCE_ASSIGN(axes, int_values(*ctx.input(1), "axes"));
      has_axes = !axes.empty();  // an empty axes tensor means "not given", as onnxruntime reads it
    }
    if (squeeze_) {
      REDUCE_ASSIGN(Shape out, squeezed(in.shape(), axes, has_axes));
      return set_view(ctx, in, std::move(out));
    }
    if (!has_axes) return make_error("Unsqueeze needs axes");
    REDUCE_ASSIGN(Shape out, unsqueezed(in.shape(), axes));
    return set_view(ctx, in, std::move(out));
  }

 private:
  static Expected<Shape> squeezed(const Shape& in, const std::vector<int64_t>& axes, bool has_axes) {
    std::vector<bool> drop(in.size(), false);
    if (!has_axes) {
      for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
    }
    for (int64_t a : axes) {
      REDUCE_ASSIGN(size_t d, normalize_axis(a, in.size()));
      if (d >= in.size() || in[d] != 1)
        return make_error("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_to_string(in));
      drop[d] = true;
    }
    Shape out;
    for (size_t d = 0; d < in.size(); ++d)
      if (!drop[d]) out.push_back(in[d]);
    return out;
  }
  static Expected<Shape> unsqueezed(const Shape& in, const std::vector<int64_t>& axes) {
    const size_t rank = in.size() + axes.size();
    std::vector<bool> inserted(rank, false);
    for (int64_t a : axes) {
      REDUCE_ASSIGN(size_t d, normalize_axis(a, rank));
      if (inserted[d]) return make_error("axes " + shape_to_string(axes) + " repeat an axis");
      inserted[d] = true;
    }
    Shape out;
    size_t next = 0;
    for (size_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[next++]);
    return out;
  }

  bool squeeze_;
  bool from_input_;
  std::vector<int64_t> axes_;
  bool has_axes_;
};

}  // namespace

Expected<KernelPtr> make_reshape_attr(const Node& node, int64_t) {
  if (!node.attribute("shape")) return make_error("Reshape needs a shape attribute");
  return KernelPtr(new ReshapeKernel(false, attr_ints(node, "shape"), false));
}
Expected<KernelPtr> make_reshape(const Node& node, int64_t) {
  const int64_t allowzero = attr_int(node, "allowzero", 0);
  if (allowzero != 0 && allowzero != 1) return make_error("allowzero must be 0 or 1");
  return KernelPtr(new ReshapeKernel(true, {}, allowzero == 1));
}
Expected<KernelPtr> make_flatten(const Node& node, int64_t opset) {
  return KernelPtr(new FlattenKernel(attr_int(node, "axis", 1), opset >= 11));
}
Expected<KernelPtr> make_squeeze_attr(const Node& node, int64_t) {
  return KernelPtr(new AxesKernel(true, false, attr_ints(node, "axes"), node.attribute("axes") != nullptr));
}
Expected<KernelPtr> make_squeeze(const Node&, int64_t) { return KernelPtr(new AxesKernel(true, true, {}, false)); }
Expected<KernelPtr> make_unsqueeze_attr(const Node& node, int64_t) {
  if (!node.attribute("axes")) return make_error("Unsqueeze needs an axes attribute");
  return KernelPtr(new AxesKernel(false, false, attr_ints(node, "axes"), true));
}
Expected<KernelPtr> make_unsqueeze(const Node&, int64_t) { return KernelPtr(new AxesKernel(false, true, {}, false)); }

}  // namespace reduce::ref
