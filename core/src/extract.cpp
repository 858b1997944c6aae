// Builds standalone models from subsets of an original model's nodes.
#include "core/extract.h"

#include <algorithm>
#include <unordered_set>

#include "core/body_nodes.h"

namespace reduce {

InitializerIndex index_initializers(const Graph& graph) {
  InitializerIndex out;
  for (const auto& init : graph.initializers) out.emplace(init.name, &init);
  return out;
}

std::vector<std::string> SubgraphBoundary::inputs() const {
  std::vector<std::string> out;
  for (const auto& r : reads)
    if (r.source != BoundarySource::Initializer) out.push_back(r.name);
  return out;
}

std::vector<std::string> SubgraphBoundary::cut_values() const {
  std::vector<std::string> out;
  for (const auto& r : reads)
    if (r.source == BoundarySource::CutValue) out.push_back(r.name);
  return out;
}

namespace {

// The default outputs of a subgraph (see subgraph_boundary).
std::vector<std::string> default_outputs(const GraphIndex& index, const std::vector<bool>& kept,
                                         std::span<const size_t> order) {
  const Graph& g = index.graph();
  std::vector<std::string> outputs;
  std::unordered_set<std::string_view> chosen;
  for (const auto& vi : g.outputs) {
    const auto p = index.producer(vi.name);
    if (p && kept[*p] && chosen.insert(vi.name).second) outputs.push_back(vi.name);
  }
  for (size_t i : order) {
    std::vector<const std::string*> open, dangling;
    bool offers = false;  // an original output, or a value that leaves the kept set
    for (const auto& o : g.nodes[i].outputs) {
      if (o.empty()) continue;
      if (chosen.count(o)) {
        offers = true;
        continue;
      }
      const auto readers = index.consumers(o);
      if (readers.empty()) dangling.push_back(&o);
      else if (std::none_of(readers.begin(), readers.end(), [&](size_t r) { return kept[r]; })) open.push_back(&o);
    }
    if (open.empty() && !offers) open = dangling;  // a dead node: its dangling outputs are all it has
    for (const std::string* o : open)
      if (chosen.insert(*o).second) outputs.push_back(*o);
  }
  return outputs;
}

}  // namespace

SubgraphBoundary subgraph_boundary(const GraphIndex& index, const InitializerIndex& initializers,
                                   std::span<const size_t> nodes, std::span<const std::string> outputs) {
  const Graph& g = index.graph();
  std::vector<bool> kept(g.nodes.size(), false);
  SubgraphBoundary b;
  for (size_t i : nodes)
    if (!kept[i]) {
      kept[i] = true;
      b.nodes.push_back(i);
    }
  // Subgraphs are usually much smaller than the graph: sort them rather than walk the whole order.
  std::sort(b.nodes.begin(), b.nodes.end(),
            [&](size_t x, size_t y) { return index.topological_position(x) < index.topological_position(y); });

  std::unordered_set<std::string_view> seen;
  auto read = [&](const std::string& v) {
    if (v.empty() || !seen.insert(v).second) return;
    const auto p = index.producer(v);
    if (p && kept[*p]) return;
    const BoundarySource source = initializers.count(v) ? BoundarySource::Initializer
                                  : p                   ? BoundarySource::CutValue
                                                        : BoundarySource::GraphInput;
    b.reads.push_back({v, source});
  };
  for (size_t i : b.nodes) {
    for (const auto& v : g.nodes[i].inputs) read(v);
    for (const auto& v : g.nodes[i].implicit_inputs) read(v);
  }
  b.outputs = outputs.empty() ? default_outputs(index, kept, b.nodes)
                              : std::vector<std::string>(outputs.begin(), outputs.end());
  return b;
}

namespace {

bool fully_static(const ValueType& t) {
  return t.is_tensor() && t.has_shape && std::all_of(t.dims.begin(), t.dims.end(), [](const Dim& d) { return d.is_static(); });
}

// An If returns what its branch returns: where inference left a branch output's dims unknown, the
// shape the If's output had in the run is that output's.
void take_if_output_shapes(const Graph& g, const std::map<std::string, Shape, std::less<>>& run_shapes, BodyValueTypes& types) {
  for (const Node& n : g.nodes) {
    if (n.op_type != "If" || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    for (const Attribute& a : n.attributes) {
      if (!a.g) continue;
      auto body = types.find(a.g.get());
      if (body == types.end()) continue;
      for (size_t k = 0; k < a.g->outputs.size() && k < n.outputs.size(); ++k) {
        auto shape = run_shapes.find(n.outputs[k]);
        auto t = body->second.find(a.g->outputs[k].name);
        if (shape == run_shapes.end() || t == body->second.end() || !t->second.is_tensor() || fully_static(t->second)) continue;
        if (t->second.has_shape && t->second.dims.size() != shape->second.size()) continue;
        t->second = ValueType::tensor(static_cast<DType>(t->second.elem_type), shape->second);
      }
    }
  }
}

}  // namespace

Extractor::Extractor(const Model& model, GraphIndex index, std::unordered_map<std::string, ValueType> types,
                     BodyValueTypes body_types)
    : model_(&model), index_(std::move(index)), types_(std::move(types)), body_types_(std::move(body_types)),
      initializers_(index_initializers(model.graph)), body_nodes_(std::make_shared<const BodyNodes>(model.graph)) {}

namespace {

// A dim that inference leaves unknown on the model as declared, but finds static once the inputs
// have the run's shapes, is a function of the inputs' symbolic dims: as dynamic to an engine as
// they are. It gets a dim_param of its own (VALUE_dK), so that a cut value keeps it dynamic (the
// materializer fixes only dims that are unknown either way: data-dependent ones).
void name_symbolic_dims(const Graph& g, const std::unordered_map<std::string, ValueType>& at_run,
                        std::unordered_map<std::string, ValueType>& types) {
  std::unordered_set<std::string_view> inputs;
  for (const auto& vi : g.inputs) inputs.insert(vi.name);  // declared as the user declared them
  for (auto& [name, t] : types) {
    if (inputs.count(name) || !t.is_tensor() || !t.has_shape) continue;
    auto it = at_run.find(name);
    if (it == at_run.end() || !it->second.has_shape || it->second.dims.size() != t.dims.size()) continue;
    for (size_t k = 0; k < t.dims.size(); ++k)
      if (!t.dims[k].is_static() && t.dims[k].param.empty() && it->second.dims[k].is_static())
        t.dims[k].param = name + "_d" + std::to_string(k);
  }
}

}  // namespace

Expected<Extractor> Extractor::create(const Model& model, const std::map<std::string, Shape, std::less<>>& run_shapes) {
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  REDUCE_ASSIGN(auto types, infer_value_types(model));
  BodyValueTypes body_types;
  const bool bodies = std::any_of(model.graph.nodes.begin(), model.graph.nodes.end(), [](const Node& n) { return n.has_subgraphs(); });
  const bool symbolic = std::any_of(model.graph.inputs.begin(), model.graph.inputs.end(), [](const ValueInfo& vi) {
    return std::any_of(vi.type.dims.begin(), vi.type.dims.end(), [](const Dim& d) { return !d.is_static(); });
  });
  if (bodies || (symbolic && !run_shapes.empty())) {
    Model fixed = model;  // shares the bodies: body_types is keyed by the model's own body graphs
    for (const auto& [name, shape] : run_shapes)
      (void)set_input_shape(fixed, name, shape).ok();  // one that does not fit keeps its declaration
    auto at_run = infer_value_types(fixed, bodies ? &body_types : nullptr);
    if (!at_run.ok()) body_types.clear();  // bodies then keep their nodes
    if (bodies) take_if_output_shapes(model.graph, run_shapes, body_types);
    if (at_run.ok() && symbolic) name_symbolic_dims(model.graph, *at_run, types);
  }
  return Extractor(model, std::move(index), std::move(types), std::move(body_types));
}

const ValueType* Extractor::type_of(std::string_view value) const {
  auto it = types_.find(std::string(value));
  return it == types_.end() ? nullptr : &it->second;
}

void Extractor::learn_type(const std::string& value, const ValueType& type) {
  auto [it, added] = types_.try_emplace(value, type);
  if (!added && it->second.kind == ValueType::Kind::Unknown) it->second = type;
}

Expected<Model> Extractor::extract(std::span<const size_t> nodes, const ExtractOptions& options) const {
  const Graph& g = model_->graph;
  const size_t n = g.nodes.size();
  for (size_t i : nodes)
    if (i >= n) return make_error("node index " + std::to_string(i) + " is out of range (the graph has " + std::to_string(n) + " nodes)");
  // A model made of constants alone (its Constant nodes are weights here) is its own whole candidate.
  if (nodes.empty() && n > 0) return make_error("cannot extract an empty set of nodes");
  const SubgraphBoundary boundary = subgraph_boundary(index_, initializers_, nodes, options.outputs);

  Model out;
  out.ir_version = model_->ir_version;
  out.opset_imports = model_->opset_imports;
  out.producer_name = model_->producer_name;
  out.producer_version = model_->producer_version;
  out.domain = model_->domain;
  out.model_version = model_->model_version;
  out.metadata_props = model_->metadata_props;
  out.functions = model_->functions;
  out.external_data = model_->external_data;
  Graph& sub = out.graph;
  sub.name = g.name;
  for (size_t i : boundary.nodes) sub.nodes.push_back(g.nodes[i]);

  auto typed = [&](const std::string& name) -> Expected<ValueInfo> {
    const ValueType* t = type_of(name);
    if (!t || t->kind == ValueType::Kind::Unknown)
      return make_error("cannot determine the type of value '" + name + "' (no value_info and shape inference found none)");
    return ValueInfo{name, *t, {}};
  };

  // Initializers in first-use order; graph inputs: the original's in their declared order, then
  // cut values in first-use order.
  std::unordered_set<std::string_view> original_inputs;
  for (const auto& r : boundary.reads) {
    if (auto f = options.frozen.find(r.name); f != options.frozen.end())
      sub.initializers.push_back(Initializer{r.name, f->second, {}, std::nullopt});
    else if (r.source == BoundarySource::Initializer)
      sub.initializers.push_back(*initializers_.at(r.name));  // shares the weight's buffer
    else if (r.source == BoundarySource::GraphInput)
      original_inputs.insert(r.name);
  }
  for (const auto& vi : g.inputs)
    if (original_inputs.erase(vi.name)) {
      REDUCE_ASSIGN(ValueInfo info, typed(vi.name));
      sub.inputs.push_back(std::move(info));
    }
  for (const auto& r : boundary.reads)
    if (r.source == BoundarySource::CutValue && !options.frozen.count(r.name)) {
      REDUCE_ASSIGN(ValueInfo info, typed(r.name));
      sub.inputs.push_back(std::move(info));
    }

  const std::vector<std::string>& outputs = boundary.outputs;
  if (!options.outputs.empty()) {
    std::unordered_set<std::string_view> available;
    for (const auto& r : boundary.reads) available.insert(r.name);
    for (const auto& node : sub.nodes) available.insert(node.outputs.begin(), node.outputs.end());
    for (const auto& o : outputs)
      if (o.empty() || !available.count(o))
        return make_error("requested output '" + o + "' is not a value of the extracted nodes");
  }
  for (const auto& o : outputs) {
    REDUCE_ASSIGN(ValueInfo info, typed(o));
    sub.outputs.push_back(std::move(info));
  }

  // Keep what is known about internal values: engines and shape inference use it.
  std::unordered_set<std::string_view> declared(outputs.begin(), outputs.end());
  for (const auto& node : sub.nodes)
    for (const auto& o : node.outputs)
      if (!o.empty() && !declared.count(o))
        if (const ValueType* t = type_of(o); t && t->kind != ValueType::Kind::Unknown)
          sub.value_info.push_back(ValueInfo{o, *t, {}});
  REDUCE_TRY(remove_body_nodes(out, g, *body_nodes_, options.removed_body_nodes, body_types_));
  return out;
}

}  // namespace reduce
