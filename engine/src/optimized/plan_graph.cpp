// PlanGraph lookups and edits.
#include "plan_graph.h"

#include <algorithm>

namespace reduce::opt {

PlanGraph::PlanGraph(Model& model, FusedParts& parts, const ValueTypes& types, const OptimizedOptions& options,
                     std::unordered_set<std::string>& names)
    : model_(&model), parts_(&parts), types_(&types), options_(&options), names_(names) {
  for (const auto& vi : model.graph.inputs) names_.insert(vi.name);
  for (const auto& init : model.graph.initializers) names_.insert(init.name);
  fp32_names_.insert(options.fp32_nodes.names.begin(), options.fp32_nodes.names.end());
  for (const auto& n : model.graph.nodes) {
    names_.insert(n.name);
    for (const auto& o : n.outputs) names_.insert(o);
  }
  refresh();
}

void PlanGraph::refresh() {
  auto& nodes = model_->graph.nodes;
  if (!removed_.empty()) {
    std::vector<Node> kept;
    kept.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!removed_[i]) kept.push_back(std::move(nodes[i]));
    nodes = std::move(kept);
  }
  removed_.assign(nodes.size(), false);
  producer_.clear();
  consumers_.clear();
  outputs_.clear();
  overridable_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) producer_[o] = i;
    for (const auto& v : nodes[i].inputs)
      if (!v.empty()) consumers_[v].push_back(i);
    for (const auto& v : nodes[i].implicit_inputs) consumers_[v].push_back(i);
  }
  for (const auto& vi : model_->graph.outputs) outputs_.insert(vi.name);
  for (const auto& vi : model_->graph.inputs) overridable_.insert(vi.name);
  initializers_.clear();
  for (size_t i = 0; i < model_->graph.initializers.size(); ++i)
    initializers_.emplace(model_->graph.initializers[i].name, i);
}

std::optional<size_t> PlanGraph::producer(const std::string& value) const {
  auto it = producer_.find(value);
  if (it == producer_.end() || removed_[it->second]) return std::nullopt;
  return it->second;
}

std::optional<size_t> PlanGraph::sole_consumer(const std::string& value) const {
  if (is_output(value)) return std::nullopt;
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return std::nullopt;
  std::optional<size_t> only;
  for (size_t c : it->second) {
    if (removed_[c]) continue;
    if (only && *only != c) return std::nullopt;
    only = c;
  }
  return only;
}

std::vector<size_t> PlanGraph::consumers(const std::string& value) const {
  std::vector<size_t> out;
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return out;
  for (size_t c : it->second)
    if (!removed_[c] && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

bool PlanGraph::internal_to(const std::string& value, std::span<const size_t> nodes) const {
  if (is_output(value)) return false;
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return true;
  for (size_t c : it->second)
    if (!removed_[c] && std::find(nodes.begin(), nodes.end(), c) == nodes.end()) return false;
  return true;
}

const Tensor* PlanGraph::constant(const std::string& value) const {
  if (value.empty() || overridable_.count(value)) return nullptr;
  auto it = initializers_.find(value);
  if (it != initializers_.end()) return &model_->graph.initializers[it->second].tensor;
  if (outer_ && !producer_.count(value))
    if (auto o = outer_->find(value); o != outer_->end()) return o->second;
  return nullptr;
}

std::optional<ValueType> PlanGraph::type(const std::string& value) const {
  if (const Tensor* t = constant(value)) return ValueType::tensor(t->dtype(), t->shape());
  auto it = types_->find(value);
  if (it == types_->end() || !it->second.is_tensor()) return std::nullopt;
  return it->second;
}

bool PlanGraph::is_float(const std::string& value) const {
  const auto t = type(value);
  return t && t->elem_type == static_cast<int32_t>(DType::Float);
}

std::optional<Shape> PlanGraph::static_shape(const std::string& value) const {
  const auto t = type(value);
  if (!t || !t->has_shape) return std::nullopt;
  Shape s;
  for (const Dim& d : t->dims) {
    if (!d.is_static()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

std::optional<size_t> PlanGraph::rank(const std::string& value) const {
  const auto t = type(value);
  if (!t || !t->has_shape) return std::nullopt;
  return t->dims.size();
}

void PlanGraph::replace(std::span<const size_t> nodes, Node fused, bool keep_parts) {
  auto& all = model_->graph.nodes;
  const size_t last = *std::max_element(nodes.begin(), nodes.end());
  if (std::any_of(nodes.begin(), nodes.end(), [&](size_t i) { return runs_in_fp32(all[i]); }))
    fp32_names_.insert(fused.name);
  if (keep_parts) {
    std::vector<Node> originals;
    std::vector<size_t> order(nodes.begin(), nodes.end());
    for (size_t i : order) originals.push_back(all[i]);
    (*parts_)[fused.name] = std::move(originals);
  }
  for (size_t i : nodes) removed_[i] = true;
  all[last] = std::move(fused);
  removed_[last] = false;
  for (const auto& o : all[last].outputs)
    if (!o.empty()) producer_[o] = last;
  // The fused node reads its inputs from now on (the parts that read them are removed).
  for (const auto& v : all[last].inputs)
    if (!v.empty()) consumers_[v].push_back(last);
}

void PlanGraph::add_node(Node node) {
  auto& all = model_->graph.nodes;
  const size_t i = all.size();
  for (const auto& o : node.outputs)
    if (!o.empty()) producer_[o] = i;
  for (const auto& v : node.inputs)
    if (!v.empty()) consumers_[v].push_back(i);
  all.push_back(std::move(node));
  removed_.push_back(false);
}

std::string PlanGraph::fresh_name(const std::string& base) {
  std::string name = base;
  while (names_.count(name)) name = base + "_" + std::to_string(++fresh_);
  names_.insert(name);
  return name;
}

void PlanGraph::add_initializer(std::string name, Tensor tensor) {
  names_.insert(name);
  initializers_[name] = model_->graph.initializers.size();
  model_->graph.initializers.push_back(Initializer{std::move(name), std::move(tensor), {}});
}

Attribute int_attribute(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Int;
  a.i = value;
  return a;
}

std::optional<double> scalar_value(const Tensor& t) {
  if (t.elements() != 1) return std::nullopt;
  if (!dtype_is_float(t.dtype()) && t.dtype() != DType::Int64 && t.dtype() != DType::Int32) return std::nullopt;
  return t.element_as_double(0);
}

bool is_scalar_value(const Tensor& t, double value) {
  auto v = scalar_value(t);
  return v && *v == value;
}

}  // namespace reduce::opt
