// Loop: runs the body while the trip count and condition allow; carries values, stacks scan outputs.
#include "reference/kernel.h"
#include "tensor_stacking.h"

namespace reduce::ref {

namespace {

class LoopKernel : public Kernel {
 public:
  explicit LoopKernel(const Graph* body) : body_(body) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor* m = ctx.input_count() > 0 ? ctx.input(0) : nullptr;
    const Tensor* c = ctx.input_count() > 1 ? ctx.input(1) : nullptr;
    if (m && m->empty()) m = nullptr;
    if (c && c->empty()) c = nullptr;
    int64_t trip = -1;  // -1: no limit
    if (m) {
      if (m->dtype() != DType::Int64 || m->elements() != 1) return make_error("M must be a single int64");
      trip = std::max<int64_t>(m->data<int64_t>()[0], 0);
    }
    bool cond = true;
    if (c) {
      if (c->dtype() != DType::Bool || c->elements() != 1) return make_error("cond must be a single bool");
      cond = c->data<uint8_t>()[0] != 0;
    }
    const size_t carried = ctx.input_count() >= 2 ? ctx.input_count() - 2 : 0;
    if (body_->inputs.size() != carried + 2)
      return make_error("body takes " + std::to_string(body_->inputs.size()) + " inputs, the node gives " + std::to_string(carried + 2));
    if (body_->outputs.size() < carried + 1) return make_error("body has too few outputs");
    const size_t scans = body_->outputs.size() - 1 - carried;
    if (ctx.output_count() > carried + scans) return make_error("node has more outputs than the body produces");
    std::vector<Tensor> values;
    for (size_t i = 0; i < carried; ++i) {
      const Tensor* v = ctx.input(2 + i);
      if (!v) return make_error("loop-carried input " + std::to_string(i) + " is missing");
      values.push_back(*v);
    }
    std::vector<std::vector<Tensor>> scan_parts(scans);
    // A loop without end stacking its scan outputs must fail at the tensor size limit, not
    // after memory runs out.
    std::vector<uint64_t> scan_bytes(scans, 0);
    for (int64_t i = 0; (trip < 0 || i < trip) && (!c || cond); ++i) {
      std::vector<Tensor> in;
      REDUCE_ASSIGN(Tensor iter, Tensor::from_vector<int64_t>(DType::Int64, {}, {i}));
      REDUCE_ASSIGN(Tensor cond_t, Tensor::from_vector<uint8_t>(DType::Bool, {}, {static_cast<uint8_t>(cond)}));
      in.push_back(std::move(iter));
      in.push_back(std::move(cond_t));
      in.insert(in.end(), values.begin(), values.end());
      REDUCE_ASSIGN(auto out, ctx.run_subgraph(*body_, in));
      if (c) {
        if (out[0].dtype() != DType::Bool || out[0].elements() != 1) return make_error("body condition must be a single bool");
        cond = out[0].data<uint8_t>()[0] != 0;
      }
      for (size_t k = 0; k < carried; ++k) values[k] = std::move(out[1 + k]);
      for (size_t k = 0; k < scans; ++k) {
        scan_bytes[k] += out[1 + carried + k].byte_size();
        REDUCE_TRY(ctx.reserve(out[1 + carried + k].byte_size()));
        if (scan_bytes[k] > max_tensor_bytes())
          return make_error("scan output " + std::to_string(k) + " exceeds the tensor size limit of " +
                            std::to_string(max_tensor_bytes()) + " bytes after " + std::to_string(i + 1) + " iterations");
        scan_parts[k].push_back(std::move(out[1 + carried + k]));
      }
    }
    for (size_t k = 0; k < carried && k < ctx.output_count(); ++k) ctx.set_output(k, values[k]);
    for (size_t k = 0; k < scans && carried + k < ctx.output_count(); ++k) {
      if (scan_parts[k].empty()) {
        // No iteration ran: an empty stack, shaped like the body output where that is known.
        Shape shape{0};
        DType dtype = DType::Float;
        const ValueType& vt = body_->outputs[1 + carried + k].type;
        if (vt.is_tensor()) {
          if (auto t = dtype_from_onnx(vt.elem_type)) dtype = *t;
          bool known = vt.has_shape;
          for (const Dim& d : vt.dims) known = known && d.is_static();
          if (known)
            for (const Dim& d : vt.dims) shape.push_back(d.value);
        }
        REDUCE_ASSIGN(Tensor empty, Tensor::allocate(dtype, shape));
        ctx.set_output(carried + k, std::move(empty));
        continue;
      }
      REDUCE_ASSIGN(Tensor stacked, stack_along(scan_parts[k], 0));
      ctx.set_output(carried + k, std::move(stacked));
    }
    return {};
  }

 private:
  const Graph* body_;
};

}  // namespace

Expected<KernelPtr> make_loop(const Node& node, int64_t) {
  const Attribute* b = node.attribute("body");
  if (!b || !b->g) return make_error("Loop needs a body graph");
  return KernelPtr(new LoopKernel(b->g.get()));
}

}  // namespace reduce::ref
