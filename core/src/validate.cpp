// Validation before anything runs: node arity against ONNX operator schemas, attributes that
// shape inference and kernels divide by or allocate with, and the nesting depth of subgraphs.
#include "core/validate.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <unordered_set>

namespace reduce {

namespace {

std::string node_label(const Node& n) {
  if (!n.name.empty() || n.outputs.empty()) return "node '" + n.name + "' (" + n.op_type + ")";
  return "node producing '" + n.outputs[0] + "' (" + n.op_type + ")";
}

bool default_domain(const Node& node) { return node.domain.empty() || node.domain == "ai.onnx"; }

const onnx::OpSchema* schema_of(const Node& node, int64_t opset) {
  if (opset <= 0) return nullptr;
  const std::string domain = default_domain(node) ? std::string() : node.domain;
  try {
    return onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(std::min<int64_t>(opset, INT32_MAX)), domain);
  } catch (const std::exception&) {
    return nullptr;
  }
}

// Whether the formal parameters of `schema` require an actual input at position k.
bool requires_input(const onnx::OpSchema& schema, size_t k) {
  const auto& formals = schema.inputs();
  if (formals.empty()) return false;
  const size_t p = std::min(k, formals.size() - 1);
  const auto& formal = formals[p];
  switch (formal.GetOption()) {
    case onnx::OpSchema::Single: return k == p;
    case onnx::OpSchema::Optional: return false;
    case onnx::OpSchema::Variadic: return k - p < static_cast<size_t>(std::max(formal.GetMinArity(), 0));
  }
  return false;
}

// Default-domain ops newer than the ONNX library (1.12 knows opset 17) that the engines run, or
// whose newer version changed arity: the library has no schema for that version, so their arity
// is stated here. Inputs 0..required-1 are required.
struct NewerOp {
  std::string_view op;
  int64_t since;
  size_t required;
  size_t max_inputs;
};
constexpr NewerOp kNewerOps[] = {
    {"BitwiseAnd", 18, 2, 2}, {"BitwiseOr", 18, 2, 2}, {"BitwiseXor", 18, 2, 2},
    {"BitwiseNot", 18, 1, 1}, {"Mish", 18, 1, 1},      {"GroupNormalization", 18, 3, 3},
    {"CenterCropPad", 18, 2, 2}, {"Col2Im", 18, 3, 3}, {"DeformConv", 19, 3, 5}, {"AffineGrid", 20, 2, 2},
    {"TensorScatter", 24, 2, 3}, {"LinearAttention", 27, 3, 6}, {"CausalConvWithState", 27, 2, 4},
    {"OptionalHasElement", 18, 0, 1},
    {"Swish", 24, 1, 1},      {"BitCast", 26, 1, 1},   {"CumProd", 26, 2, 2},
    {"SwiGLU", 28, 2, 2},
};

const NewerOp* newer_op(const Node& node, int64_t opset) {
  if (!default_domain(node)) return nullptr;
  for (const auto& op : kNewerOps)
    if (op.op == node.op_type && opset >= op.since) return &op;
  return nullptr;
}

Status check_newer_arity(const Node& node, const NewerOp& op) {
  const size_t n = node.inputs.size();
  if (n > op.max_inputs)
    return make_error("takes at most " + std::to_string(op.max_inputs) + " inputs, got " + std::to_string(n));
  for (size_t k = 0; k < op.required; ++k)
    if (k >= n || node.inputs[k].empty()) return make_error("input " + std::to_string(k) + " is required");
  return {};
}

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Whether the ONNX library knows opset `opset` of the node's domain. For newer opsets the schema
// found is an older version of the op: its required inputs still are, but newer versions may
// take more inputs or outputs.
bool opset_known(const Node& node, int64_t opset) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(default_domain(node) ? std::string() : node.domain);
  return it != ranges.end() && opset <= it->second.second;
}

Status check_arity(const Node& node, const onnx::OpSchema& schema, bool exact) {
  const size_t n = node.inputs.size();
  if (exact && n > static_cast<size_t>(schema.max_input()))
    return make_error("takes at most " + std::to_string(schema.max_input()) + " inputs, got " + std::to_string(n));
  const size_t checked = std::max(n, static_cast<size_t>(std::max(schema.min_input(), 0)));
  for (size_t k = 0; k < checked; ++k)
    if ((k >= n || node.inputs[k].empty()) && requires_input(schema, k))
      return make_error("input " + std::to_string(k) + " is required");
  // Newer opsets may add outputs, never drop required ones: kernels write the ones the old schema requires.
  const size_t m = node.outputs.size();
  if (m < static_cast<size_t>(std::max(schema.min_output(), 0)))
    return make_error("output " + std::to_string(m) + " is required");
  if (!exact) return {};
  if (m > static_cast<size_t>(schema.max_output()))
    return make_error("has " + std::to_string(m) + " outputs, at most " + std::to_string(schema.max_output()));
  return {};
}

// Conv and pooling ops, whose pads must not be negative (Pad's own `pads` may crop).
bool is_conv_or_pool(std::string_view op) {
  static constexpr std::array<std::string_view, 13> kOps = {
      "Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
      "MaxUnpool", "Col2Im", "DeformConv", "MaxRoiPool", "GlobalLpPool", "Im2Col"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

// Attributes of the default domain that shape inference and kernels divide by, or size loops
// and allocations with.
Status check_attributes(const Node& node) {
  if (!default_domain(node)) return {};
  for (const Attribute& a : node.attributes) {
    const std::string& n = a.name;
    if (n == "strides" || n == "dilations" || n == "kernel_shape") {
      for (int64_t v : a.ints)
        if (v <= 0) return make_error("attribute '" + n + "' must be positive, got " + ints_to_string(a.ints));
    } else if ((n == "pads" || n == "output_padding") && is_conv_or_pool(node.op_type)) {
      for (int64_t v : a.ints)
        if (v < 0) return make_error("attribute '" + n + "' must not be negative, got " + ints_to_string(a.ints));
    } else if (n == "group" || n == "blocksize" || (n == "size" && node.op_type == "LRN") ||
               (n == "num_outputs" && node.op_type == "Split")) {
      if (a.i <= 0) return make_error("attribute '" + n + "' must be positive, got " + std::to_string(a.i));
    }
  }
  return {};
}

// The deepest subgraph under `graph` (at `depth`), stopping once past kMaxSubgraphDepth.
int subgraph_depth(const Graph& graph, int depth) {
  int deepest = depth;
  for (const Node& node : graph.nodes)
    for (const Attribute& a : node.attributes) {
      if (deepest > kMaxSubgraphDepth) return deepest;
      if (a.g) deepest = std::max(deepest, subgraph_depth(*a.g, depth + 1));
      for (const auto& g : a.graphs) deepest = std::max(deepest, subgraph_depth(*g, depth + 1));
    }
  return deepest;
}

// Problems inside a subgraph name the node that holds it: "node 'if_0' (If) subgraph 'then': ...".
Status validate_graph(const Graph& graph, const Model& model) {
  for (const Node& node : graph.nodes) {
    auto fail = [&](const Error& e) { return Error{{}, node_label(node) + ": " + e.what}; };
    const int64_t opset = model.opset(node.domain).value_or(0);
    if (const NewerOp* newer = newer_op(node, opset)) {
      if (Status s = check_newer_arity(node, *newer); !s) return fail(s.error());
    } else if (const auto* schema = schema_of(node, opset)) {
      if (Status s = check_arity(node, *schema, opset_known(node, opset)); !s) return fail(s.error());
    }
    if (Status s = check_attributes(node); !s) return fail(s.error());
    for (const Attribute& a : node.attributes) {
      std::vector<const Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (const auto& g : a.graphs) subs.push_back(g.get());
      for (const Graph* sub : subs)
        if (Status s = validate_graph(*sub, model); !s)
          return Error{{}, node_label(node) + " subgraph '" + sub->name + "': " + s.error().what};
    }
  }
  return {};
}

}  // namespace

Status validate_model(const Model& model) {
  if (subgraph_depth(model.graph, 0) > kMaxSubgraphDepth)
    return make_error("subgraphs are nested more than " + std::to_string(kMaxSubgraphDepth) + " deep");
  return validate_graph(model.graph, model);
}

std::vector<bool> required_inputs(const Node& node, int64_t opset) {
  if (const NewerOp* newer = newer_op(node, opset)) {
    std::vector<bool> required(std::max(node.inputs.size(), newer->required));
    for (size_t k = 0; k < newer->required; ++k) required[k] = true;
    return required;
  }
  const onnx::OpSchema* schema = schema_of(node, opset);
  if (!schema) return {};
  std::vector<bool> required(std::max(node.inputs.size(), static_cast<size_t>(std::max(schema->min_input(), 0))));
  for (size_t k = 0; k < required.size(); ++k) required[k] = requires_input(*schema, k);
  return required;
}

bool is_onnx_op_type(std::string_view name) {
  // Built once: the registry holds every version of every operator (about 2000 schemas).
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> out;
    for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) out.insert(schema.Name());
    return out;
  }();
  return names.count(std::string(name)) > 0;
}

}  // namespace reduce
