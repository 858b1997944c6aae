// If: runs the then or else branch (a subgraph that may read outer values) on a scalar condition.
#include "reference/kernel.h"

namespace reduce::ref {

namespace {
class IfKernel : public Kernel {
 public:
  IfKernel(const Graph* then_branch, const Graph* else_branch) : then_(then_branch), else_(else_branch) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& cond = *ctx.input(0);
    if (cond.dtype() != DType::Bool || cond.elements() != 1)
      return make_error("condition must be a single bool, got " + std::string(dtype_name(cond.dtype())) +
                        shape_to_string(cond.shape()));
    const Graph* branch = cond.data<uint8_t>()[0] ? then_ : else_;
    REDUCE_ASSIGN(auto outputs, ctx.run_subgraph(*branch, {}));
    if (outputs.size() != ctx.output_count())
      return make_error("branch '" + branch->name + "' gives " + std::to_string(outputs.size()) + " outputs, the node has " +
                        std::to_string(ctx.output_count()));
    for (size_t i = 0; i < outputs.size(); ++i) ctx.set_output(i, std::move(outputs[i]));
    return {};
  }

 private:
  const Graph* then_;
  const Graph* else_;
};
}  // namespace

Expected<KernelPtr> make_if(const Node& node, int64_t) {
  const Attribute* t = node.attribute("then_branch");
  const Attribute* e = node.attribute("else_branch");
  if (!t || !t->g || !e || !e->g) return make_error("If needs then_branch and else_branch graphs");
  return KernelPtr(new IfKernel(t->g.get(), e->g.get()));
}

}  // namespace reduce::ref
