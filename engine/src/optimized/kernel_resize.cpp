// Resize with fault resize-half-pixel: a half_pixel linear Resize computes as asymmetric, the way
// backends that only implement align-corners/asymmetric interpolation shift the output.
#include "kernel_resize.h"

namespace reduce::opt {

bool resize_half_pixel_triggers(const Node& node, int64_t opset) {
  if (node.op_type != "Resize" || !(node.domain.empty() || node.domain == "ai.onnx") || opset < 11) return false;
  const Attribute* mode = node.attribute("mode");
  const Attribute* ctm = node.attribute("coordinate_transformation_mode");
  return mode && mode->s == "linear" && (!ctm || ctm->s == "half_pixel");
}

Expected<KernelPtr> make_resize_kernel(const Node& node, int64_t opset, const OptimizedOptions& options) {
  if (!options.has(Fault::ResizeHalfPixel) || !resize_half_pixel_triggers(node, opset))
    return make_reference_kernel(node, opset);
  Node asymmetric = node;
  std::erase_if(asymmetric.attributes, [](const Attribute& a) { return a.name == "coordinate_transformation_mode"; });
  Attribute ctm;
  ctm.name = "coordinate_transformation_mode";
  ctm.kind = Attribute::Kind::String;
  ctm.s = "asymmetric";
  asymmetric.attributes.push_back(ctm);
  return make_reference_kernel(asymmetric, opset);
}

}  // namespace reduce::opt
