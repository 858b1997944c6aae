// ReductionGraph: units, candidate building, boundaries and types for the passes.
#include "reduction_graph.h"

#include <algorithm>
#include <map>
#include <queue>
#include <span>
#include <unordered_set>

#include "core/graph_algorithms.h"

namespace reduce::detail {

ReductionGraph::ReductionGraph(const Model& model, GraphIndex index, const ReduceOptions& options, bool certified,
                               bool keep_pairs)
    : model_(&model),
      index_(std::move(index)),
      options_(&options),
      certified_(certified),
      unit_(model.graph.nodes.size(), false),
      initializers_(index_initializers(model.graph)),
      pairs_(index_),
      keep_pairs_(keep_pairs && !pairs_.empty()),
      bodies_(model.graph),
      body_units_(keep_pairs) {
  bool any = false;
  for (size_t i = 0; i < unit_.size(); ++i) any |= unit_[i] = !is_constant_node(model.graph.nodes[i]);
  if (!any) std::fill(unit_.begin(), unit_.end(), true);  // a graph of constants: they are the units
}

std::optional<Candidate> ReductionGraph::without(const Candidate& base, const std::vector<size_t>& group) const {
  const std::unordered_set<size_t> drop(group.begin(), group.end());
  const auto units = units_of(base);
  std::vector<size_t> keep;
  for (size_t u : units)
    if (!drop.count(u)) keep.push_back(u);
  std::optional<Candidate> c = base;
  if (keep.size() != units.size()) c = with_units(base, std::move(keep));
  if (!c) return std::nullopt;
  // Body units go into removed_body_nodes (those of nodes still kept, not yet gone).
  const auto kept = kept_units(*c);
  bool removed_body = false;
  for (size_t u : group)
    if (is_body_unit(u) && u < kept.size() && kept[u]) {
      c->removed_body_nodes.push_back(u - unit_.size());
      removed_body = true;
    }
  if (removed_body) {
    std::sort(c->removed_body_nodes.begin(), c->removed_body_nodes.end());
    c->removed_body_nodes.erase(std::unique(c->removed_body_nodes.begin(), c->removed_body_nodes.end()),
                                c->removed_body_nodes.end());
  }
  if (!removed_body && c->nodes == base.nodes) return std::nullopt;
  return c;
}

std::vector<size_t> ReductionGraph::body_units_of(const Candidate& c) const {
  std::vector<size_t> out;
  if (!body_units_) return out;
  const auto& removed = c.removed_body_nodes;
  for (size_t n : c.nodes) {
    const auto [first, end] = bodies_.range_of(n);
    for (size_t id = first; id < end;) {
      if (std::binary_search(removed.begin(), removed.end(), id)) {
        id = bodies_[id].end;  // its nested nodes went with it
        continue;
      }
      out.push_back(body_unit(id));
      ++id;
    }
  }
  return out;
}

std::vector<size_t> ReductionGraph::all_units_of(const Candidate& c) const {
  auto out = units_of(c);
  const auto body = body_units_of(c);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<bool> ReductionGraph::kept_units(const Candidate& c) const {
  std::vector<bool> kept(unit_.size() + bodies_.size(), false);
  for (size_t u : all_units_of(c)) kept[u] = true;
  return kept;
}

std::vector<size_t> ReductionGraph::removal_of(const Candidate& base, std::vector<size_t> group) const {
  if (!keep_pairs_) return group;
  const std::unordered_set<size_t> kept(base.nodes.begin(), base.nodes.end());
  std::unordered_set<size_t> in_group(group.begin(), group.end());
  const size_t n = group.size();
  for (size_t i = 0; i < n; ++i) {
    if (is_body_unit(group[i])) continue;
    if (const auto q = pairs_.quantizer(group[i]); q && kept.count(*q) && in_group.insert(*q).second) group.push_back(*q);
  }
  return group;
}

Status ReductionGraph::check(const Candidate& c) const {
  REDUCE_TRY(check_well_formed(c, unit_.size(), body_units_ ? bodies_.size() : 0));
  for (size_t id : c.removed_body_nodes)
    if (!keeps(c, bodies_[id].owner)) return make_error("the candidate removes body node " + std::to_string(id) + " of a node it does not keep");
  if (keep_pairs_) REDUCE_TRY(pairs_.check(c.nodes, c.outputs));
  return {};
}

size_t ReductionGraph::size_of(const Candidate& c) const {
  size_t n = 0;
  for (size_t i : c.nodes)
    if (unit_[i]) ++n;
  return n;
}

std::vector<size_t> ReductionGraph::units_of(const Candidate& c) const {
  std::vector<size_t> out;
  for (size_t n : c.nodes)
    if (unit_[n]) out.push_back(n);
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return index_.topological_position(a) < index_.topological_position(b); });
  return out;
}

Candidate ReductionGraph::marking(Candidate c, std::vector<std::string> outputs) const {
  c.outputs.clear();
  if (outputs != outputs_of(c)) c.outputs = std::move(outputs);
  return c;
}

std::optional<Candidate> ReductionGraph::with_units(const Candidate& base, std::vector<size_t> units) const {
  std::vector<bool> kept(unit_.size(), false);
  if (keep_pairs_) {
    // A QuantizeLinear stays only with every DequantizeLinear it feeds (TensorRT refuses it alone);
    // without it, those that stay read its recorded output as a cut value.
    for (size_t u : units) kept[u] = true;
    std::erase_if(units, [&](size_t u) {
      const auto dqs = pairs_.dequantizers(u);
      return std::any_of(dqs.begin(), dqs.end(), [&](size_t dq) { return !kept[dq]; });
    });
    std::fill(kept.begin(), kept.end(), false);
  }
  if (units.empty()) return std::nullopt;
  for (size_t u : units) {
    kept[u] = true;
    for (size_t p : index_.predecessors(u))
      if (!unit_[p]) kept[p] = true;
  }
  Candidate c;
  for (size_t i = 0; i < kept.size(); ++i)
    if (kept[i]) c.nodes.push_back(i);

  // When the base feeds every cut value as a constant (the failure needed it), values newly cut
  // are frozen too; otherwise frozen values carry over while they are still cut.
  const SubgraphBoundary bounds = boundary(c);
  const auto cuts = bounds.cut_values();
  const bool freeze_all = !base.frozen.empty() && base.frozen.size() == cut_values(base).size();
  const std::unordered_set<std::string_view> cut_set(cuts.begin(), cuts.end());
  if (freeze_all) {
    c.frozen = cuts;
    std::sort(c.frozen.begin(), c.frozen.end());
  } else {
    for (const auto& f : base.frozen)
      if (cut_set.count(f)) c.frozen.push_back(f);
  }
  for (const auto& o : base.outputs) {
    const auto p = index_.producer(o);
    if (p && kept[*p]) c.outputs.push_back(o);
  }
  if (c.outputs == bounds.outputs) c.outputs.clear();
  if (!base.filled.empty()) {
    std::unordered_set<std::string_view> read;
    for (size_t n : c.nodes)
      for (const auto& v : graph().nodes[n].inputs) read.insert(v);
    for (const auto& [name, value] : base.filled)
      if (read.count(name)) c.filled.emplace(name, value);
  }
  for (const auto& d : base.dropped_attributes)
    if (kept[d.first]) c.dropped_attributes.push_back(d);
  for (size_t id : base.removed_body_nodes)
    if (kept[bodies_[id].owner]) c.removed_body_nodes.push_back(id);
  if (!base.input_shapes.empty()) {
    const auto inputs = bounds.inputs();
    const std::unordered_set<std::string_view> input_set(inputs.begin(), inputs.end());
    for (const auto& [name, shape] : base.input_shapes)
      if (input_set.count(name)) c.input_shapes.emplace(name, shape);
  }
  return c;
}

std::vector<std::string> ReductionGraph::node_outputs(size_t node) const {
  std::vector<std::string> out;
  for (const auto& o : graph().nodes[node].outputs)
    if (!o.empty()) out.push_back(o);
  return out;
}

std::vector<size_t> ReductionGraph::ancestors_within(const Candidate& c, size_t unit) const {
  std::vector<bool> kept(unit_.size(), false);
  for (size_t n : c.nodes) kept[n] = true;
  const auto reached = ancestors(index_, std::span<const size_t>(&unit, 1), kept);
  std::vector<size_t> out;
  for (size_t n : index_.topological_order())
    if (reached[n] && unit_[n]) out.push_back(n);
  return out;
}

std::vector<size_t> ReductionGraph::fusion_ends(const Candidate& c) const {
  const auto outs = outputs_of(c);
  const std::unordered_set<std::string> observed(outs.begin(), outs.end());
  const auto read_only_by = [&](const std::string& value, size_t unit) {
    if (value.empty()) return true;
    const auto readers = index_.consumers(value);
    return !observed.count(value) &&
           std::all_of(readers.begin(), readers.end(), [&](size_t r) { return r == unit || !keeps(c, r); });
  };
  std::vector<size_t> ends;
  for (size_t u : units_of(c)) {
    const auto preds = index_.predecessors(u);
    if (std::any_of(preds.begin(), preds.end(), [&](size_t q) {
          const auto& q_outs = graph().nodes[q].outputs;
          return unit_[q] && keeps(c, q) &&
                 std::all_of(q_outs.begin(), q_outs.end(), [&](const std::string& v) { return read_only_by(v, u); });
        }))
      ends.push_back(u);
  }
  return ends;
}

std::vector<size_t> ReductionGraph::fusion_closure(const Candidate& c, size_t end) const {
  const auto units = units_of(c);
  const auto outs = outputs_of(c);
  const std::unordered_set<std::string> observed(outs.begin(), outs.end());
  std::vector<bool> taken(unit_.size(), false);
  taken[end] = true;
  const auto taken_alone = [&](const std::string& value) {
    const auto readers = index_.consumers(value);
    return !observed.count(value) && !index_.is_graph_output(value) &&
           std::all_of(readers.begin(), readers.end(), [&](size_t r) { return taken[r]; });
  };
  const auto is_read = [&](const std::string& value) { return !index_.consumers(value).empty(); };
  std::vector<size_t> closure;
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    const size_t u = *it;
    const auto u_outs = node_outputs(u);
    if (u == end || (std::any_of(u_outs.begin(), u_outs.end(), is_read) &&
                     std::all_of(u_outs.begin(), u_outs.end(), taken_alone))) {
      taken[u] = true;
      closure.push_back(u);
    }
  }
  std::reverse(closure.begin(), closure.end());
  return closure;
}

std::vector<size_t> ReductionGraph::fusion_extension(const Candidate& c, const ValueSet& observed,
                                                     const std::vector<size_t>& window, size_t limit) const {
  std::unordered_set<size_t> taken(window.begin(), window.end());
  // Latest first: a unit's readers come after it, so each is settled before the units it reads.
  const auto earlier = [&](size_t a, size_t b) { return index_.topological_position(a) < index_.topological_position(b); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(earlier)> pending(earlier);
  std::unordered_set<size_t> queued;
  const auto queue_inputs = [&](size_t u) {
    for (size_t q : index_.predecessors(u))
      if (q < unit_.size() && unit_[q] && keeps(c, q) && !taken.count(q) && queued.insert(q).second) pending.push(q);
  };
  for (size_t u : window) queue_inputs(u);
  const auto taken_alone = [&](const std::string& value) {
    const auto readers = index_.consumers(value);
    return !readers.empty() && !observed.count(value) && !index_.is_graph_output(value) &&
           std::all_of(readers.begin(), readers.end(), [&](size_t r) { return taken.count(r) > 0; });
  };
  std::vector<size_t> out;
  while (!pending.empty() && out.size() < limit) {
    const size_t u = pending.top();
    pending.pop();
    const auto u_outs = node_outputs(u);
    if (u_outs.empty() || !std::all_of(u_outs.begin(), u_outs.end(), taken_alone)) continue;
    taken.insert(u);
    out.push_back(u);
    queue_inputs(u);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<Candidate> ReductionGraph::frontier_window(const Candidate& c, const std::vector<size_t>& units,
                                                         const ValueSet& observed, size_t first, size_t count) const {
  std::vector<size_t> window(units.begin() + static_cast<std::ptrdiff_t>(first), units.begin() + static_cast<std::ptrdiff_t>(count));
  if (first > 0) {
    const auto extension = fusion_extension(c, observed, window, kFusionReach);
    window.insert(window.begin(), extension.begin(), extension.end());
  }
  auto prefix = with_units(c, window);
  if (!prefix) return prefix;
  prefix->outputs.clear();
  for (size_t u : window) {
    if (!keeps(*prefix, u) || quantizes_pair(u)) continue;
    for (auto& o : node_outputs(u)) {
      const auto readers = index_.consumers(o);
      if (observed.count(o) || std::any_of(readers.begin(), readers.end(),
                                           [&](size_t r) { return keeps(c, r) && !keeps(*prefix, r); }))
        prefix->outputs.push_back(std::move(o));
    }
  }
  if (prefix->outputs.empty()) return std::nullopt;
  // Taken out first: the order in which marking's two parameters are initialised is unspecified.
  auto outputs = std::move(prefix->outputs);
  return marking(std::move(*prefix), std::move(outputs));
}

const ValueType* ReductionGraph::type_of(const std::string& value) const {
  if (!types_inferred_) {
    types_inferred_ = true;
    auto types = infer_value_types(*model_);
    if (types) types_ = std::move(types).value();
    else if (options_->log) options_->log("shape inference failed (" + types.error().message() + "): input shapes are unknown");
  }
  auto it = types_.find(value);
  return it == types_.end() ? nullptr : &it->second;
}

std::string ReductionGraph::describe(const Candidate& c) const {
  std::map<std::string, size_t> ops;
  size_t n = 0;
  for (size_t i : c.nodes)
    if (is_unit(i)) {
      ++ops[graph().nodes[i].op_type];
      ++n;
    }
  std::string s = std::to_string(n) + " nodes";
  if (n <= 8) {
    s += " [";
    bool first = true;
    for (size_t i : c.nodes)
      if (is_unit(i)) {
        s += (first ? "" : " ") + graph().nodes[i].name + ":" + graph().nodes[i].op_type;
        first = false;
      }
    s += "]";
  } else {
    s += " (";
    bool first = true;
    for (const auto& [op, k] : ops) {
      s += (first ? "" : ", ") + op + " " + std::to_string(k);
      first = false;
    }
    s += ")";
  }
  if (!c.outputs.empty()) s += ", " + std::to_string(c.outputs.size()) + " marked outputs";
  if (!c.frozen.empty()) s += ", " + std::to_string(c.frozen.size()) + " frozen";
  if (!c.input_shapes.empty()) s += ", " + std::to_string(c.input_shapes.size()) + " reshaped inputs";
  if (!c.filled.empty()) s += ", " + std::to_string(c.filled.size()) + " filled weights";
  if (!c.dropped_attributes.empty()) s += ", " + std::to_string(c.dropped_attributes.size()) + " dropped attributes";
  if (const size_t body = body_units_of(c).size(); body > 0) s += ", " + std::to_string(body) + " nodes in bodies";
  return s;
}

}  // namespace reduce::detail
