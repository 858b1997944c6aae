// Concat and Split: join or cut tensors along one axis, each part moved with one strided copy.
#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}
  Status compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> parts;
    for (size_t i = 0; i < ctx.input_count(); ++i)
      if (ctx.input(i)) parts.push_back(ctx.input(i));
    if (parts.empty()) return make_error("Concat needs at least one input");
    const Tensor& first = *parts[0];
    const size_t rank = first.rank();
    if (rank == 0) return make_error("cannot concatenate scalars");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, rank));
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (const Tensor* t : parts) {
      bool same = t->dtype() == first.dtype() && t->rank() == rank;
      for (size_t d = 0; same && d < rank; ++d) same = d == axis || t->shape()[d] == first.shape()[d];
      if (!same)
        return make_error("cannot concatenate " + std::string(dtype_name(first.dtype())) + shape_to_string(first.shape()) +
                          " and " + std::string(dtype_name(t->dtype())) + shape_to_string(t->shape()) + " on axis " +
                          std::to_string(axis));
      out_shape[axis] += t->shape()[axis];
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, first.dtype(), out_shape));
    const auto out_strides = contiguous_strides(out_shape);
    int64_t offset = 0;
    for (const Tensor* t : parts) {
      copy_into(*out, offset * out_strides[axis], out_strides, *t);
      offset += t->shape()[axis];
    }
    return {};
  }

 private:
  int64_t axis_;
};

// Where the split sizes come from changed across opsets: attribute, input, or num_outputs (18).
enum class SplitSource { AttrOrInput, Attr, Input };

class SplitKernel : public Kernel {
 public:
  SplitKernel(int64_t axis, SplitSource source, std::vector<int64_t> split, bool has_split, int64_t num_outputs)
      : axis_(axis), source_(source), split_(std::move(split)), has_split_(has_split), num_outputs_(num_outputs) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, in.rank()));
    if (in.rank() == 0) return make_error("cannot split a scalar");
    const int64_t dim = in.shape()[axis];
    const size_t n = ctx.output_count();
    std::vector<int64_t> sizes = split_;
    bool given = has_split_;
    if (source_ != SplitSource::Attr && ctx.input(1)) {
      REDUCE_ASSIGN(sizes, int_values(*ctx.input(1), "split"));
      given = true;
    }
    if (given) {
      int64_t sum = 0;
      bool longer = false;  // the sizes add up past the dimension (and maybe past INT64_MAX)
      for (int64_t s : sizes) {
        if (s < 0) return make_error("split " + shape_to_string(sizes) + " has a negative size");
        if (s > dim - sum) longer = true;
        if (longer) break;
        sum += s;
      }
      if (sizes.size() != n || longer || sum != dim)
        return make_error("split " + shape_to_string(sizes) + " does not cut a dimension of " + std::to_string(dim) +
                          " into " + std::to_string(n) + " outputs");
    } else if (num_outputs_ > 0) {
      // Opset 18: equal chunks of ceil(dim / n), the last one smaller.
      if (static_cast<size_t>(num_outputs_) != n)
        return make_error("num_outputs is " + std::to_string(num_outputs_) + " but the node has " + std::to_string(n) +
                          " outputs");
      const int64_t chunk = (dim + num_outputs_ - 1) / num_outputs_;
      for (int64_t left = dim; sizes.size() < n; left -= std::min(left, chunk)) sizes.push_back(std::min(left, chunk));
    } else {
      if (n == 0 || dim % static_cast<int64_t>(n) != 0)
        return make_error("cannot split a dimension of " + std::to_string(dim) + " into " + std::to_string(n) +
                          " equal parts");
      sizes.assign(n, dim / static_cast<int64_t>(n));
    }
    const auto in_strides = contiguous_strides(in.shape());
    const size_t es = dtype_size(in.dtype());
    int64_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      Shape shape = in.shape();
      shape[axis] = sizes[i];
      REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(i, in.dtype(), shape));
      strided_copy(out->mutable_bytes().data(), in.bytes().data() + start * in_strides[axis] * static_cast<int64_t>(es), es,
                   shape, contiguous_strides(shape), in_strides);
      start += sizes[i];
    }
    return {};
  }

 private:
  int64_t axis_;
  SplitSource source_;
  std::vector<int64_t> split_;
  bool has_split_;
  int64_t num_outputs_;
};

}  // namespace

Expected<KernelPtr> make_concat(const Node& node, int64_t opset) {
  if (opset >= 4 && !node.attribute("axis")) return make_error("Concat needs an axis attribute");
  return KernelPtr(new ConcatKernel(attr_int(node, "axis", 1)));
}

Expected<KernelPtr> make_split(const Node& node, int64_t opset) {
  const SplitSource source = opset == 1 ? SplitSource::AttrOrInput : opset < 13 ? SplitSource::Attr : SplitSource::Input;
  const bool has_split = source != SplitSource::Input && node.attribute("split");
  const int64_t num_outputs = opset >= 18 ? attr_int(node, "num_outputs", 0) : 0;
  if (num_outputs < 0) return make_error("num_outputs must be positive");
  if (num_outputs > 0 && node.inputs.size() > 1 && !node.inputs[1].empty())
    return make_error("Split takes either a split input or num_outputs, not both");
  return KernelPtr(new SplitKernel(attr_int(node, "axis", 0), source, attr_ints(node, "split"), has_split, num_outputs));
}

}  // namespace reduce::ref
