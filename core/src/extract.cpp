// Builds standalone models from subsets of an original model's nodes.
#include "core/extract.h"

#include <algorithm>
#include <unordered_set>

namespace reduce {

Expected<Extractor> Extractor::create(const Model& model) {
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  REDUCE_ASSIGN(auto types, infer_value_types(model));
  Extractor e(model, std::move(index), std::move(types));
  for (const auto& init : model.graph.initializers) e.initializers_.emplace(init.name, &init);
  return e;
}

const ValueType* Extractor::type_of(std::string_view value) const {
  auto it = types_.find(std::string(value));
  return it == types_.end() ? nullptr : &it->second;
}

Expected<Model> Extractor::extract(std::span<const size_t> nodes, const ExtractOptions& options) const {
  const Graph& g = model_->graph;
  const size_t n = g.nodes.size();
  std::vector<bool> kept(n, false);
  for (size_t i : nodes) {
    if (i >= n) return make_error("node index " + std::to_string(i) + " is out of range (the graph has " + std::to_string(n) + " nodes)");
    kept[i] = true;
  }
  std::vector<size_t> order;
  for (size_t i : index_.topological_order())
    if (kept[i]) order.push_back(i);
  if (order.empty()) return make_error("cannot extract an empty set of nodes");

  Model out;
  out.ir_version = model_->ir_version;
  out.opset_imports = model_->opset_imports;
  out.producer_name = model_->producer_name;
  out.producer_version = model_->producer_version;
  out.domain = model_->domain;
  out.model_version = model_->model_version;
  out.metadata_props = model_->metadata_props;
  out.functions = model_->functions;
  Graph& sub = out.graph;
  sub.name = g.name;

  std::unordered_set<std::string_view> produced;
  for (size_t i : order)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) produced.insert(o);

  auto typed = [&](const std::string& name) -> Expected<ValueInfo> {
    const ValueType* t = type_of(name);
    if (!t || t->kind == ValueType::Kind::Unknown)
      return make_error("cannot determine the type of value '" + name + "' (no value_info and shape inference found none)");
    return ValueInfo{name, *t, {}};
  };

  // Cut values: original graph inputs keep their relative order, then the rest by first use.
  std::unordered_set<std::string_view> bound;
  std::vector<std::string> cut;
  for (size_t i : order) {
    const Node& node = g.nodes[i];
    auto bind = [&](const std::string& v) -> Status {
      if (v.empty() || produced.count(v) || !bound.insert(v).second) return {};
      if (auto f = options.frozen.find(v); f != options.frozen.end()) {
        sub.initializers.push_back(Initializer{v, f->second, {}});
      } else if (auto init = initializers_.find(v); init != initializers_.end()) {
        sub.initializers.push_back(*init->second);  // shares the weight's buffer
      } else {
        cut.push_back(v);
      }
      return {};
    };
    for (const auto& v : node.inputs) REDUCE_TRY(bind(v));
    for (const auto& v : node.implicit_inputs) REDUCE_TRY(bind(v));
    sub.nodes.push_back(node);
  }
  std::unordered_set<std::string_view> cut_set(cut.begin(), cut.end());
  for (const auto& vi : g.inputs)
    if (cut_set.erase(vi.name)) {
      REDUCE_ASSIGN(ValueInfo info, typed(vi.name));
      sub.inputs.push_back(std::move(info));
    }
  for (const auto& v : cut)
    if (cut_set.count(v)) {
      REDUCE_ASSIGN(ValueInfo info, typed(v));
      sub.inputs.push_back(std::move(info));
    }

  // Outputs.
  std::vector<std::string> outputs = options.outputs;
  if (outputs.empty()) {
    std::unordered_set<std::string_view> chosen;
    for (const auto& vi : g.outputs)
      if (produced.count(vi.name) && chosen.insert(vi.name).second) outputs.push_back(vi.name);
    for (size_t i : order) {
      const Node& node = g.nodes[i];
      std::vector<const std::string*> open, dangling;
      for (const auto& o : node.outputs) {
        if (o.empty() || chosen.count(o)) continue;
        const auto readers = index_.consumers(o);
        if (readers.empty()) {
          dangling.push_back(&o);
        } else if (std::none_of(readers.begin(), readers.end(), [&](size_t r) { return kept[r]; })) {
          open.push_back(&o);
        }
      }
      const bool offers_output = !open.empty() || std::any_of(node.outputs.begin(), node.outputs.end(),
                                                              [&](const std::string& o) { return chosen.count(o) > 0; });
      if (!offers_output) open = dangling;  // a dead node: its dangling outputs are all it has
      for (const std::string* o : open) {
        chosen.insert(*o);
        outputs.push_back(*o);
      }
    }
  } else {
    for (const auto& o : outputs)
      if (!produced.count(o) && !bound.count(o))
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
  return out;
}

}  // namespace reduce
