// GraphBuilder: names, weights and nodes of a corpus model.
#include "graph_builder.h"

#include <cassert>
#include <utility>

namespace reduce::corpus {

Attribute int_attribute(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Int;
  a.i = value;
  return a;
}

Attribute ints_attribute(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(values);
  return a;
}

Attribute graph_attribute(std::string name, std::shared_ptr<Graph> body) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Graph;
  a.g = std::move(body);
  return a;
}

Attribute float_attribute(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Float;
  a.f = value;
  return a;
}

Attribute string_attribute(std::string name, std::string value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::String;
  a.s = std::move(value);
  return a;
}

GraphBuilder::GraphBuilder(std::string graph_name) {
  model_.ir_version = 8;
  model_.opset_imports = {{"", kOpset}};
  model_.producer_name = "reduce-corpus";
  model_.graph.name = std::move(graph_name);
}

void GraphBuilder::set_opset(int64_t opset) {
  assert(model_.graph.nodes.empty() && "the opset is chosen before the first node");
  model_.opset_imports = {{"", opset}};
  // IR version 10 is the one ONNX writes with opset 23; older opsets keep the corpus's IR 8.
  if (opset >= 23) model_.ir_version = 10;
}

void GraphBuilder::begin_block() {
  ++block_;
  counter_ = 0;
}

std::string GraphBuilder::fresh(std::string_view stem) {
  std::string name = "l";
  name += std::to_string(block_);
  name += '/';
  name += stem;
  name += '_';
  name += std::to_string(counter_++);
  return name;
}

Value GraphBuilder::input(std::string name, Shape shape, DType dtype) {
  model_.graph.inputs.push_back({name, ValueType::tensor(dtype, shape), {}});
  return {std::move(name), std::move(shape)};
}

void GraphBuilder::output(const Value& value) {
  model_.graph.outputs.push_back({value.name, ValueType::tensor(DType::Float, value.shape), {}});
}

Value GraphBuilder::weight(std::string_view stem, Shape shape, std::vector<float> values) {
  auto tensor = Tensor::from_vector(DType::Float, shape, values);
  assert(tensor.ok() && "weight values must match the shape");
  std::string name = fresh(stem);
  model_.graph.initializers.push_back({name, std::move(tensor).value(), {}});
  return {std::move(name), std::move(shape)};
}

Value GraphBuilder::uniform_weight(std::string_view stem, Shape shape, Random& rng, double lo, double hi) {
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  return weight(stem, std::move(shape), rng.uniform_values(count, lo, hi));
}

Value GraphBuilder::scalar(std::string_view stem, float value) { return weight(stem, {}, {value}); }

Value GraphBuilder::int64s(std::string_view stem, std::vector<int64_t> values) {
  const Shape shape{static_cast<int64_t>(values.size())};
  auto tensor = Tensor::from_vector(DType::Int64, shape, values);
  assert(tensor.ok());
  std::string name = fresh(stem);
  model_.graph.initializers.push_back({name, std::move(tensor).value(), {}});
  return {std::move(name), shape};
}

Value GraphBuilder::node(std::string op_type, std::vector<std::string> inputs, Shape output_shape,
                         std::vector<Attribute> attributes) {
  Node n;
  n.name = fresh(op_type);
  n.op_type = std::move(op_type);
  n.inputs = std::move(inputs);
  n.outputs = {n.name};
  n.attributes = std::move(attributes);
  Value out{n.name, std::move(output_shape)};
  model_.graph.nodes.push_back(std::move(n));
  return out;
}

void GraphBuilder::declare(const Value& value) {
  model_.graph.value_info.push_back({value.name, ValueType::tensor(DType::Float, value.shape), {}});
}

void GraphBuilder::mark_minimal() {
  assert(!model_.graph.nodes.empty());
  minimal_.push_back(model_.graph.nodes.size() - 1);
}

void GraphBuilder::mark_fp32() {
  assert(!model_.graph.nodes.empty());
  fp32_.push_back(model_.graph.nodes.size() - 1);
}

Model GraphBuilder::finish(std::string doc_string) {
  model_.doc_string = std::move(doc_string);
  return std::move(model_);
}

}  // namespace reduce::corpus
