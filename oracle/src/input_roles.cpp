// The roles of model inputs for random values (input_roles.h): a small table of the ONNX operators
// that read an input as a shape or axes, or as indices into another input's axis.
#include "input_roles.h"

#include <algorithm>
#include <string_view>

namespace reduce {

namespace {

// Operators of the default domain that read input `position` as a shape or as axes.
struct ShapeInput {
  std::string_view op;
  size_t position;
  std::string_view what;
};
constexpr ShapeInput kShapeInputs[] = {
    {"Reshape", 1, "shape"},   {"Expand", 1, "shape"},    {"ConstantOfShape", 0, "shape"}, {"Resize", 3, "sizes"},
    {"Squeeze", 1, "axes"},    {"Unsqueeze", 1, "axes"},  {"ReduceSum", 1, "axes"},        {"ReduceMean", 1, "axes"},
    {"ReduceMax", 1, "axes"},  {"ReduceMin", 1, "axes"},  {"ReduceProd", 1, "axes"},       {"Slice", 3, "axes"},
};

// Operators that read input `position` as indices into axis `axis_attribute` (default `axis`) of
// input `data`: valid values are [0, size - 1] of that axis (negative ones count from the end).
struct IndexInput {
  std::string_view op;
  size_t position;
  size_t data;
  std::string_view axis_attribute;  // "" for a fixed axis
  int64_t axis;
};
constexpr IndexInput kIndexInputs[] = {
    {"Gather", 1, 0, "axis", 0},        {"GatherElements", 1, 0, "axis", 0}, {"ScatterElements", 1, 0, "axis", 0},
    {"RoiAlign", 2, 0, "", 0},          {"MaxRoiPool", 1, 0, "", 0},
};

// The static size of axis `axis` of value `name`: a weight's shape, else its declared type.
std::optional<int64_t> axis_size(const Graph& graph, const std::string& name, int64_t axis) {
  for (const auto& init : graph.initializers)
    if (init.name == name) {
      const Shape& s = init.tensor.shape();
      const int64_t rank = static_cast<int64_t>(s.size());
      if (axis < 0) axis += rank;
      return axis >= 0 && axis < rank ? std::optional<int64_t>(s[static_cast<size_t>(axis)]) : std::nullopt;
    }
  const ValueInfo* vi = graph.find_value_info(name);
  if (!vi || !vi->type.is_tensor() || !vi->type.has_shape) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(vi->type.dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const Dim& d = vi->type.dims[static_cast<size_t>(axis)];
  return d.is_static() ? std::optional<int64_t>(d.value) : std::nullopt;
}

std::string node_words(const Node& n) { return std::string(n.op_type) + " '" + n.name + "'"; }

}  // namespace

InputRole input_role(const Graph& graph, const std::string& input) {
  InputRole role;
  for (const Node& n : graph.nodes) {
    if (!n.domain.empty() && n.domain != "ai.onnx") continue;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != input) continue;
      for (const auto& s : kShapeInputs)
        if (n.op_type == s.op && k == s.position && role.shape_reader.empty())
          role.shape_reader = node_words(n) + " reads it as its " + std::string(s.what);
      for (const auto& i : kIndexInputs) {
        if (n.op_type != i.op || k != i.position || i.data >= n.inputs.size()) continue;
        int64_t axis = i.axis;
        if (!i.axis_attribute.empty())
          if (const Attribute* a = n.attribute(i.axis_attribute)) axis = a->i;
        const auto size = axis_size(graph, n.inputs[i.data], axis);
        if (!size || *size <= 0) continue;
        const double hi = static_cast<double>(*size - 1);
        if (!role.index_range || hi < role.index_range->hi) {
          role.index_range = ValueRange{0, hi};
          role.index_reader = node_words(n) + " indexes axis " + std::to_string(axis) + " of '" + n.inputs[i.data] +
                              "' (size " + std::to_string(*size) + ") with it";
        }
      }
    }
  }
  return role;
}

}  // namespace reduce
