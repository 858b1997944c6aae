// Dropout in inference: the output is the input and the mask is all ones; random training is refused.
#include <cstring>

#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

class DropoutKernel : public Kernel {
 public:
  // bool_mask: opset 10+ (before that the mask has the input's type).
  explicit DropoutKernel(bool bool_mask) : bool_mask_(bool_mask) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    // Opset 12+: ratio and training_mode are inputs. Training drops random elements unless ratio is 0.
    if (const Tensor* mode = ctx.input(2)) {
      if (mode->dtype() != DType::Bool || mode->elements() != 1) return make_error("training_mode must be a bool scalar");
      double ratio = 0.5;
      if (const Tensor* r = ctx.input(1)) {
        if (!dtype_is_float(r->dtype()) || r->elements() != 1) return make_error("ratio must be a floating-point scalar");
        ratio = r->element_as_double(0);
      }
      if (mode->data<uint8_t>()[0] != 0 && ratio != 0)
        return make_error("training mode with a non-zero ratio drops random elements: the output is random");
    }
    ctx.set_output(0, x);
    if (ctx.output_count() > 1) {
      const DType mask_type = bool_mask_ ? DType::Bool : x.dtype();
      REDUCE_ASSIGN(Tensor* mask, ctx.allocate_output(1, mask_type, x.shape()));
      // The value 1 in the mask's type, repeated.
      std::vector<std::byte> unit(dtype_size(mask_type));
      visit_dtype(mask_type, [&]<typename T>() {
        T v;
        if (mask_type == DType::Float16) v = static_cast<T>(0x3c00);
        else if (mask_type == DType::BFloat16) v = static_cast<T>(0x3f80);
        else v = static_cast<T>(1);
        std::memcpy(unit.data(), &v, std::min(sizeof(T), unit.size()));
      });
      auto bytes = mask->mutable_bytes();
      for (size_t i = 0; i + unit.size() <= bytes.size(); i += unit.size()) std::memcpy(bytes.data() + i, unit.data(), unit.size());
    }
    return {};
  }

 private:
  bool bool_mask_;
};

}  // namespace

Expected<KernelPtr> make_dropout(const Node& node, int64_t opset) {
  const float ratio = attr_float(node, "ratio", 0.5f);
  if (ratio < 0 || ratio >= 1) return make_error("ratio must be in [0, 1)");
  return KernelPtr(new DropoutKernel(opset >= 10));
}

}  // namespace reduce::ref
