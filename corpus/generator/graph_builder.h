// GraphBuilder: appends nodes and weights to a model under construction, with fresh names per block,
// and remembers which nodes form the ground-truth minimal reproducer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "random.h"

namespace reduce::corpus {

// A float tensor value of the graph being built, with its static shape.
struct Value {
  std::string name;
  Shape shape;
};

Attribute int_attribute(std::string name, int64_t value);
Attribute ints_attribute(std::string name, std::vector<int64_t> values);
Attribute graph_attribute(std::string name, std::shared_ptr<Graph> body);
Attribute float_attribute(std::string name, float value);
Attribute string_attribute(std::string name, std::string value);

class GraphBuilder {
 public:
  // Opset 17: ReduceMean still takes `axes` as an attribute, Resize has every transformation mode.
  static constexpr int64_t kOpset = 17;

  explicit GraphBuilder(std::string graph_name);

  // The default-domain opset the model imports (kOpset unless a family asks for a newer one, before
  // its first node: the bodies write opset-dependent forms, e.g. ReduceMean's axes, from it).
  int64_t opset() const { return model_.opset("").value_or(kOpset); }
  void set_opset(int64_t opset);

  // Starts a new block: the following nodes and weights are named "<block>/...".
  void begin_block();

  Value input(std::string name, Shape shape, DType dtype = DType::Float);
  void output(const Value& value);

  Value weight(std::string_view stem, Shape shape, std::vector<float> values);
  Value uniform_weight(std::string_view stem, Shape shape, Random& rng, double lo, double hi);
  Value scalar(std::string_view stem, float value);  // rank 0: never a rank-4 broadcast operand
  Value int64s(std::string_view stem, std::vector<int64_t> values);

  // Appends a node with one float output of the given shape. "" inputs are omitted optionals.
  Value node(std::string op_type, std::vector<std::string> inputs, Shape output_shape,
             std::vector<Attribute> attributes = {});
  // Declares a value's type and shape (value_info), as exporters do for values of ops that older
  // ONNX shape inference does not know.
  void declare(const Value& value);
  // Marks the node just appended as part of the ground-truth minimal reproducer.
  void mark_minimal();
  // Marks the node just appended as part of the ground-truth set of nodes to keep in FP32 (precision
  // families: the one 1-minimal set with which the model passes in FP16).
  void mark_fp32();

  size_t node_count() const { return model_.graph.nodes.size(); }
  const std::vector<size_t>& minimal_nodes() const { return minimal_; }
  const std::vector<size_t>& fp32_nodes() const { return fp32_; }
  Model finish(std::string doc_string);

 private:
  std::string fresh(std::string_view stem);

  Model model_;
  std::vector<size_t> minimal_;
  std::vector<size_t> fp32_;
  size_t block_ = 0;
  size_t counter_ = 0;
};

}  // namespace reduce::corpus
