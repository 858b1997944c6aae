// Scan: runs the body once per slice of the scan inputs, carrying state and stacking scan outputs.
// Opset 8 has a leading batch axis and sequence_lens; opset 9+ has per-input axes and directions.
#include <algorithm>

#include "reference/kernel.h"
#include "tensor_stacking.h"

namespace reduce::ref {

namespace {

struct ScanAttrs {
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
  bool batched = false;  // opset 8
};

// One scan over `sequence` slices: states and scan inputs already without a batch axis.
Expected<std::vector<Tensor>> scan_once(KernelContext& ctx, const Graph& body, const ScanAttrs& a, std::vector<Tensor> states,
                                        const std::vector<Tensor>& inputs, const std::vector<size_t>& in_axes, int64_t steps,
                                        int64_t padded_steps) {
  const size_t n_states = states.size();
  const size_t n_outs = body.outputs.size() - n_states;
  std::vector<std::vector<Tensor>> parts(n_outs);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<Tensor> in = states;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const bool reverse = k < a.in_dirs.size() && a.in_dirs[k] == 1;
      REDUCE_ASSIGN(Tensor slice, take_along(inputs[k], in_axes[k], reverse ? steps - 1 - s : s));
      in.push_back(std::move(slice));
    }
    REDUCE_ASSIGN(auto out, ctx.run_subgraph(body, in));
    for (size_t k = 0; k < n_states; ++k) states[k] = std::move(out[k]);
    for (size_t k = 0; k < n_outs; ++k) parts[k].push_back(std::move(out[n_states + k]));
  }
  std::vector<Tensor> result = std::move(states);
  for (size_t k = 0; k < n_outs; ++k) {
    if (parts[k].empty()) return make_error("scan has no iterations, so its output shapes are unknown");
    const bool reverse = k < a.out_dirs.size() && a.out_dirs[k] == 1;
    if (reverse) std::reverse(parts[k].begin(), parts[k].end());
    // Opset 8 pads sequences shorter than the batch's longest with zeros.
    while (static_cast<int64_t>(parts[k].size()) < padded_steps) {
      REDUCE_ASSIGN(Tensor zero, Tensor::allocate(parts[k][0].dtype(), parts[k][0].shape()));
      parts[k].push_back(std::move(zero));
    }
    int64_t axis = k < a.out_axes.size() ? a.out_axes[k] : 0;
    const int64_t r = static_cast<int64_t>(parts[k][0].rank()) + 1;
    if (axis < -r || axis >= r) return make_error("scan_output_axes value " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += r;
    REDUCE_ASSIGN(Tensor stacked, stack_along(parts[k], static_cast<size_t>(axis)));
    result.push_back(std::move(stacked));
  }
  return result;
}

class ScanKernel : public Kernel {
 public:
  ScanKernel(const Graph* body, ScanAttrs a) : body_(body), a_(std::move(a)) {}

  Status compute(KernelContext& ctx) const override {
    const size_t first = a_.batched ? 1 : 0;
    const size_t m = static_cast<size_t>(a_.num_scan_inputs);
    if (ctx.input_count() < first + m) return make_error("fewer inputs than num_scan_inputs");
    const size_t n_states = ctx.input_count() - first - m;
    if (body_->inputs.size() != n_states + m) return make_error("body inputs do not match the node's states and scan inputs");
    if (body_->outputs.size() < n_states) return make_error("body has fewer outputs than states");
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < n_states + m; ++i) {
      const Tensor* t = ctx.input(first + i);
      if (!t) return make_error("input " + std::to_string(first + i) + " is missing");
      (i < n_states ? states : inputs).push_back(*t);
    }
    std::vector<Tensor> results;
    if (!a_.batched) {
      std::vector<size_t> axes;
      int64_t steps = -1;
      for (size_t k = 0; k < m; ++k) {
        REDUCE_ASSIGN(size_t ax, normalize_axis(k < a_.in_axes.size() ? a_.in_axes[k] : 0, inputs[k].rank()));
        if (inputs[k].rank() == 0) return make_error("scan inputs must have at least one dim");
        if (steps >= 0 && inputs[k].shape()[ax] != steps) return make_error("scan inputs have different sequence lengths");
        steps = inputs[k].shape()[ax];
        axes.push_back(ax);
      }
      REDUCE_ASSIGN(results, scan_once(ctx, *body_, a_, states, inputs, axes, std::max<int64_t>(steps, 0), 0));
    } else {
      REDUCE_ASSIGN(results, run_batched(ctx, states, inputs));
    }
    for (size_t i = 0; i < results.size() && i < ctx.output_count(); ++i) ctx.set_output(i, std::move(results[i]));
    return {};
  }

 private:
  // Opset 8: every input has a batch axis 0 and scan inputs a sequence axis 1; each batch entry scans alone.
  Expected<std::vector<Tensor>> run_batched(KernelContext& ctx, const std::vector<Tensor>& states, const std::vector<Tensor>& inputs) const {
    if (inputs.empty()) return make_error("Scan needs at least one scan input");
    for (const Tensor& t : inputs)
      if (t.rank() < 2 || t.shape()[0] != inputs[0].shape()[0] || t.shape()[1] != inputs[0].shape()[1])
        return make_error("scan inputs must share (batch, sequence) dims");
    const int64_t B = inputs[0].shape()[0], S = inputs[0].shape()[1];
    for (const Tensor& t : states)
      if (t.rank() < 1 || t.shape()[0] != B) return make_error("states must have the batch dim first");
    std::vector<int64_t> lens(static_cast<size_t>(B), S);
    if (const Tensor* sl = ctx.input(0); sl && !sl->empty()) {
      if (sl->dtype() != DType::Int32 || sl->elements() != static_cast<uint64_t>(B))
        return make_error("sequence_lens must be int32 with one value per batch entry");
      for (int64_t b = 0; b < B; ++b) {
        lens[static_cast<size_t>(b)] = sl->data<int32_t>()[static_cast<size_t>(b)];
        if (lens[static_cast<size_t>(b)] < 0 || lens[static_cast<size_t>(b)] > S) return make_error("sequence_lens value out of range");
      }
    }
    const std::vector<size_t> axes(inputs.size(), 0);
    std::vector<std::vector<Tensor>> per_batch;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<Tensor> st, in;
      for (const Tensor& t : states) {
        REDUCE_ASSIGN(Tensor s, take_along(t, 0, b));
        st.push_back(std::move(s));
      }
      for (const Tensor& t : inputs) {
        REDUCE_ASSIGN(Tensor s, take_along(t, 0, b));
        in.push_back(std::move(s));
      }
      REDUCE_ASSIGN(auto r, scan_once(ctx, *body_, a_, std::move(st), in, axes, lens[static_cast<size_t>(b)], S));
      per_batch.push_back(std::move(r));
    }
    std::vector<Tensor> results;
    for (size_t k = 0; B > 0 && k < per_batch[0].size(); ++k) {
      std::vector<Tensor> parts;
      for (auto& r : per_batch) parts.push_back(std::move(r[k]));
      REDUCE_ASSIGN(Tensor stacked, stack_along(parts, 0));
      results.push_back(std::move(stacked));
    }
    return results;
  }

  const Graph* body_;
  ScanAttrs a_;
};

}  // namespace

Expected<KernelPtr> make_scan(const Node& node, int64_t opset) {
  const Attribute* b = node.attribute("body");
  if (!b || !b->g) return make_error("Scan needs a body graph");
  ScanAttrs a;
  a.num_scan_inputs = attr_int(node, "num_scan_inputs", -1);
  if (a.num_scan_inputs < 1) return make_error("num_scan_inputs must be positive");
  a.batched = opset < 9;
  a.in_dirs = attr_ints(node, a.batched ? "directions" : "scan_input_directions");
  if (!a.batched) {
    a.in_axes = attr_ints(node, "scan_input_axes");
    a.out_axes = attr_ints(node, "scan_output_axes");
    a.out_dirs = attr_ints(node, "scan_output_directions");
  }
  for (const auto* v : {&a.in_dirs, &a.out_dirs})
    for (int64_t d : *v)
      if (d != 0 && d != 1) return make_error("scan directions must be 0 or 1");
  if (a.batched) {
    // Opset 8 scan outputs follow the batch axis: axis 0 of each per-batch result (before batch stacking).
    a.out_axes.clear();
  }
  return KernelPtr(new ScanKernel(b->g.get(), std::move(a)));
}

}  // namespace reduce::ref
