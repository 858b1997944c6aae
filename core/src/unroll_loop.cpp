// Unrolling Loop nodes into the enclosing graph, one body copy per recorded iteration.
#include "core/unroll_loop.h"

#include <algorithm>
#include <map>

#include "subgraph_names.h"

namespace reduce {

namespace {

using detail::mapped;
using detail::NameMap;
using detail::TakenNames;

std::string loop_prefix(const Node& loop) {
  if (!loop.name.empty()) return loop.name;
  for (const auto& o : loop.outputs)
    if (!o.empty()) return o;
  return "Loop";
}

const Graph* body_of(const Node& loop) {
  const Attribute* body = loop.attribute("body");
  return body && body->g ? body->g.get() : nullptr;
}

// How a Loop or a Scan wires its body: which body inputs and outputs are carried (state) values,
// and how its scan outputs are stacked.
struct Wiring {
  bool scan = false;           // Scan (else Loop: iteration number and condition in front)
  size_t carried = 0;          // loop-carried (Loop) or state (Scan) values
  size_t scan_inputs = 0;      // Scan only
  std::vector<int64_t> input_axes, input_reversed, output_axes, output_reversed;  // Scan attributes

  size_t first_carried_input() const { return scan ? 0 : 2; }    // in the body's inputs
  size_t first_carried_output() const { return scan ? 0 : 1; }   // in the body's outputs
  size_t initial(size_t k) const { return scan ? k : 2 + k; }    // the node input of carried value k
};

// The unrolled nodes of one Loop or Scan: appends them to `out`, weights to `g`.
class LoopUnroller {
 public:
  LoopUnroller(Graph& g, const Node& loop, const Graph& body, Wiring wiring, TakenNames& taken, int64_t opset)
      : g_(g), loop_(loop), body_(body), w_(std::move(wiring)), taken_(taken), opset_(opset), prefix_(loop_prefix(loop)) {
    for (const auto& o : body_.outputs) read_.insert(o.name);
    for (const auto& n : body_.nodes) {
      read_.insert(n.inputs.begin(), n.inputs.end());
      read_.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
      produced_.insert(n.outputs.begin(), n.outputs.end());
    }
    for (const auto& vi : g_.value_info) described_.insert(vi.name);
  }

  std::vector<Node> unroll(int64_t trips) {
    const size_t carried = w_.carried;
    move_weights();
    std::string cond = !w_.scan && loop_.inputs.size() > 1 ? loop_.inputs[1] : "";
    std::vector<std::string> values(carried);
    for (size_t k = 0; k < carried; ++k) values[k] = loop_.inputs[w_.initial(k)];
    const size_t first_scan = w_.first_carried_output() + carried;
    std::vector<std::vector<std::string>> scans(body_.outputs.size() - first_scan);
    for (int64_t i = 0; i < trips; ++i) {
      NameMap map = weights_;
      for (size_t k = 0; k < carried; ++k) map[body_.inputs[w_.first_carried_input() + k].name] = values[k];
      if (w_.scan) bind_slices(map, i, trips);
      else bind_iteration(map, i, cond);
      if (i + 1 == trips) name_results_after_loop(map);
      const std::string iteration = prefix_ + "/" + std::to_string(i);
      auto define = [&](const std::string& v) {
        if (!v.empty() && !map.count(v)) map[v] = TakenNames::fresh(taken_.values, iteration, v);
      };
      for (const auto& n : body_.nodes)
        for (const auto& o : n.outputs) define(o);
      for (const Node& n : body_.nodes) out_.push_back(detail::copied_node(n, map, taken_, iteration));
      declare_types(map);
      if (!w_.scan) cond = mapped(map, body_.outputs[0].name);
      for (size_t k = 0; k < carried; ++k) values[k] = mapped(map, body_.outputs[w_.first_carried_output() + k].name);
      for (size_t s = 0; s < scans.size(); ++s) scans[s].push_back(mapped(map, body_.outputs[first_scan + s].name));
    }
    for (size_t k = 0; k < carried; ++k)
      if (k < loop_.outputs.size() && !loop_.outputs[k].empty() && values[k] != loop_.outputs[k])
        add("Identity", {values[k]}, loop_.outputs[k], "Identity_output_" + std::to_string(k));
    for (size_t s = 0; s < scans.size(); ++s)
      if (carried + s < loop_.outputs.size() && !loop_.outputs[carried + s].empty()) {
        const bool reversed = w_.scan && s < w_.output_reversed.size() && w_.output_reversed[s];
        if (reversed) std::reverse(scans[s].begin(), scans[s].end());
        const int64_t axis = w_.scan && s < w_.output_axes.size() ? w_.output_axes[s] : 0;
        stack(scans[s], loop_.outputs[carried + s], s, axis);
      }
    return std::move(out_);
  }

 private:
  // The body's declared types of the values its nodes compute hold in every iteration (an inlined
  // If keeps its branch's the same way): inference then starts from them where ONNX alone would
  // stop, e.g. after ops newer than the ONNX library.
  void declare_types(const NameMap& map) {
    for (const auto& vi : body_.value_info) {
      auto it = map.find(vi.name);
      if (!produced_.count(vi.name) || it == map.end() || !described_.insert(it->second).second) continue;
      g_.value_info.push_back({it->second, vi.type, vi.doc_string});
    }
  }

  void move_weights() {
    for (const auto& init : body_.initializers) {
      weights_[init.name] = TakenNames::fresh(taken_.values, prefix_, init.name);
      g_.initializers.push_back({weights_[init.name], init.tensor, init.doc_string});
    }
  }

  // Loop: the iteration number (a weight, made only when the body reads it) and the condition.
  void bind_iteration(NameMap& map, int64_t i, const std::string& cond) {
    const std::string& iteration_name = body_.inputs[0].name;
    if (reads(iteration_name)) map[iteration_name] = constant(DType::Int64, i, "iteration_" + std::to_string(i));
    const std::string& cond_name = body_.inputs[1].name;
    if (reads(cond_name)) map[cond_name] = cond.empty() ? constant(DType::Bool, 1, "condition") : cond;
  }

  // Scan: slice i of each scan input (from the end when reversed): a Gather on its scan axis.
  void bind_slices(NameMap& map, int64_t i, int64_t trips) {
    for (size_t j = 0; j < w_.scan_inputs; ++j) {
      const std::string& name = body_.inputs[w_.carried + j].name;
      if (!reads(name)) continue;
      const bool reversed = j < w_.input_reversed.size() && w_.input_reversed[j];
      const int64_t index = reversed ? trips - 1 - i : i;
      const std::string tag = "scan_input_" + std::to_string(j) + "_" + std::to_string(index);
      const std::string slice = TakenNames::fresh(taken_.values, prefix_, prefix_ + "/" + tag);
      add("Gather", {loop_.inputs[w_.carried + j], index_weight(index)}, slice, tag,
          {int_attribute("axis", j < w_.input_axes.size() ? w_.input_axes[j] : 0)});
      map[name] = slice;
    }
  }

  std::string index_weight(int64_t index) {
    auto it = indices_.find(index);
    if (it == indices_.end()) it = indices_.emplace(index, constant(DType::Int64, index, "index_" + std::to_string(index))).first;
    return it->second;
  }

  static Attribute int_attribute(const char* name, int64_t value) {
    Attribute a;
    a.name = name;
    a.kind = Attribute::Kind::Int;
    a.i = value;
    return a;
  }

  // The last iteration's carried results computed in the body take the node outputs' names.
  void name_results_after_loop(NameMap& map) {
    std::unordered_set<std::string> produced;
    for (const auto& n : body_.nodes)
      for (const auto& o : n.outputs)
        if (!o.empty()) produced.insert(o);
    for (size_t k = 0; k < w_.carried && k < loop_.outputs.size(); ++k) {
      const std::string& v = body_.outputs[w_.first_carried_output() + k].name;
      if (produced.count(v) && !map.count(v) && !loop_.outputs[k].empty()) map[v] = loop_.outputs[k];
    }
  }

  bool reads(const std::string& name) const { return !name.empty() && read_.count(name) > 0; }

  // A weight of the graph (Constant nodes become weights when a model is loaded).
  std::string constant(DType dtype, int64_t value, const std::string& what) {
    const std::string name = TakenNames::fresh(taken_.values, prefix_, prefix_ + "/" + what);
    Tensor t = dtype == DType::Bool ? *Tensor::from_vector(dtype, {}, std::vector<uint8_t>{value != 0})
                                    : *Tensor::from_vector(dtype, {}, std::vector<int64_t>{value});
    g_.initializers.push_back({name, std::move(t), ""});
    return name;
  }

  void add(const std::string& op, std::vector<std::string> inputs, const std::string& output, const std::string& what,
           std::vector<Attribute> attributes = {}) {
    Node n;
    n.name = TakenNames::fresh(taken_.nodes, prefix_, prefix_ + "/" + what);
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    n.attributes = std::move(attributes);
    out_.push_back(std::move(n));
  }

  // A scan output: the iterations' values, each with a new axis `axis`, concatenated on it.
  void stack(const std::vector<std::string>& parts, const std::string& output, size_t s, int64_t axis) {
    const std::string tag = "scan_" + std::to_string(s);
    std::string axes;
    if (opset_ >= 13) {
      axes = TakenNames::fresh(taken_.values, prefix_, prefix_ + "/" + tag + "_axes");
      g_.initializers.push_back({axes, *Tensor::from_vector(DType::Int64, {1}, std::vector<int64_t>{axis}), ""});
    }
    std::vector<std::string> unsqueezed;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string name = parts.size() == 1 ? output
                                                 : TakenNames::fresh(taken_.values, prefix_, prefix_ + "/" + tag + "_" + std::to_string(i));
      std::vector<Attribute> attributes;
      if (opset_ < 13) {
        Attribute a;
        a.name = "axes";
        a.kind = Attribute::Kind::Ints;
        a.ints = {axis};
        attributes.push_back(std::move(a));
      }
      add("Unsqueeze", opset_ >= 13 ? std::vector<std::string>{parts[i], axes} : std::vector<std::string>{parts[i]}, name,
          tag + "_unsqueeze_" + std::to_string(i), std::move(attributes));
      unsqueezed.push_back(name);
    }
    if (parts.size() == 1) return;
    add("Concat", unsqueezed, output, tag + "_concat", {int_attribute("axis", axis)});
  }

  Graph& g_;
  const Node& loop_;
  const Graph& body_;
  const Wiring w_;
  TakenNames& taken_;
  const int64_t opset_;
  const std::string prefix_;
  NameMap weights_;
  std::map<int64_t, std::string> indices_;  // Scan: slice index -> its weight
  std::unordered_set<std::string> read_;     // values the body reads (node inputs, outputs it returns)
  std::unordered_set<std::string> produced_;  // values the body's nodes compute
  std::unordered_set<std::string> described_;  // values of g_ with a declared type
  std::vector<Node> out_;
};

std::vector<int64_t> ints_or(const Node& n, const char* name, size_t count) {
  const Attribute* a = n.attribute(name);
  return a ? a->ints : std::vector<int64_t>(count, 0);
}

// How a Loop or Scan wires its body, or why it cannot be unrolled (the body does not match the
// node's inputs and outputs; opset 8's batched Scan).
std::string wiring_of(const Node& n, const Graph* body, int64_t opset, Wiring& w) {
  const std::string what = n.op_type + " " + loop_prefix(n) + ": ";
  if (!body) return what + "it has no body";
  if (!is_scan_node(n)) {
    if (body->inputs.size() < 2 || body->outputs.size() < body->inputs.size() - 1 || n.inputs.size() < body->inputs.size())
      return what + "its body does not match its inputs";
    w.carried = body->inputs.size() - 2;
    return {};
  }
  if (opset < 9) return what + "a batched Scan of opset 8 is not unrolled";
  const Attribute* m = n.attribute("num_scan_inputs");
  if (!m || m->i <= 0 || static_cast<uint64_t>(m->i) > n.inputs.size()) return what + "bad num_scan_inputs";
  w.scan = true;
  w.scan_inputs = static_cast<size_t>(m->i);
  w.carried = n.inputs.size() - w.scan_inputs;
  if (body->inputs.size() != n.inputs.size() || body->outputs.size() < w.carried ||
      n.outputs.size() > body->outputs.size())
    return what + "its body does not match its inputs";
  const size_t scan_outputs = body->outputs.size() - w.carried;
  w.input_axes = ints_or(n, "scan_input_axes", w.scan_inputs);
  w.input_reversed = ints_or(n, "scan_input_directions", w.scan_inputs);
  w.output_axes = ints_or(n, "scan_output_axes", scan_outputs);
  w.output_reversed = ints_or(n, "scan_output_directions", scan_outputs);
  if (w.input_axes.size() != w.scan_inputs || w.input_reversed.size() != w.scan_inputs ||
      w.output_axes.size() != scan_outputs || w.output_reversed.size() != scan_outputs)
    return what + "its scan attributes do not match its inputs and outputs";
  return {};
}

// Why a Loop or Scan with a known trip count stays, or empty when it can be unrolled.
std::string reason_to_keep(const Node& n, const Graph& body, const Wiring& w, int64_t trips, size_t budget) {
  const std::string what = n.op_type + " " + loop_prefix(n) + ": ";
  if (trips < 0) return what + "negative trip count";
  const size_t scans = body.outputs.size() - w.first_carried_output() - w.carried;
  if (trips == 0 && scans > 0) return what + "made no iteration and has scan outputs (their shape is unknown)";
  const size_t per_trip = body.nodes.size() + 2 + scans + w.scan_inputs;
  if (static_cast<uint64_t>(trips) > budget / per_trip)
    return what + std::to_string(trips) + " iterations of " + std::to_string(body.nodes.size()) +
           " nodes exceed the unrolling budget of " + std::to_string(budget) + " nodes";
  return {};
}

}  // namespace

bool is_loop_node(const Node& node) { return node.op_type == "Loop" && (node.domain.empty() || node.domain == "ai.onnx"); }

bool has_loop_node(const Graph& graph) { return std::any_of(graph.nodes.begin(), graph.nodes.end(), is_loop_node); }

bool is_scan_node(const Node& node) { return node.op_type == "Scan" && (node.domain.empty() || node.domain == "ai.onnx"); }

bool has_loop_or_scan(const Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return is_loop_node(n) || is_scan_node(n); });
}

std::optional<int64_t> scan_trips(const Node& scan, const std::function<std::optional<Shape>(const std::string&)>& shape_of) {
  const Attribute* m = scan.attribute("num_scan_inputs");
  if (!is_scan_node(scan) || !m || m->i <= 0 || static_cast<uint64_t>(m->i) > scan.inputs.size()) return std::nullopt;
  const std::optional<Shape> first = shape_of(scan.inputs[scan.inputs.size() - static_cast<size_t>(m->i)]);
  if (!first) return std::nullopt;
  const std::vector<int64_t> axes = ints_or(scan, "scan_input_axes", static_cast<size_t>(m->i));
  int64_t axis = axes.empty() ? 0 : axes[0];
  const auto rank = static_cast<int64_t>(first->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return (*first)[static_cast<size_t>(axis)];
}

std::vector<std::pair<size_t, std::string>> add_trip_counters(Model& model) {
  Graph& g = model.graph;
  TakenNames taken(g);
  std::vector<std::pair<size_t, std::string>> counters;
  for (size_t p = 0; p < g.nodes.size(); ++p) {
    Node& loop = g.nodes[p];
    if (!is_loop_node(loop)) continue;
    Attribute* body = nullptr;
    for (auto& a : loop.attributes)
      if (a.name == "body" && a.g) body = &a;
    if (!body || body->g->inputs.empty()) continue;
    auto copy = std::make_shared<Graph>(*body->g);
    TakenNames inner(*copy);
    const std::string counted = TakenNames::fresh(inner.values, "trip_counter", "trip_counter");
    Node identity;
    identity.name = TakenNames::fresh(inner.nodes, "trip_counter", "trip_counter");
    identity.op_type = "Identity";
    identity.inputs = {copy->inputs[0].name};
    identity.outputs = {counted};
    copy->nodes.push_back(std::move(identity));
    copy->outputs.push_back({counted, ValueType::tensor(DType::Int64, {}), ""});
    body->g = std::move(copy);
    const std::string output = TakenNames::fresh(taken.values, loop_prefix(loop), loop_prefix(loop) + "/trip_counter");
    loop.outputs.push_back(output);
    counters.emplace_back(p, output);
  }
  return counters;
}

UnrollResult unroll_loop_nodes(Model& model, const std::function<std::optional<int64_t>(size_t)>& trips,
                               size_t max_new_nodes) {
  Graph& g = model.graph;
  const int64_t opset = model.opset("").value_or(model.opset("ai.onnx").value_or(13));
  UnrollResult result;
  TakenNames taken(g);
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t p = 0; p < g.nodes.size(); ++p) {
    Node& n = g.nodes[p];
    const std::optional<int64_t> count = is_loop_node(n) || is_scan_node(n) ? trips(p) : std::nullopt;
    if (!count) {
      nodes.push_back(std::move(n));
      continue;
    }
    const Graph* body = body_of(n);
    const size_t budget = max_new_nodes > result.body_nodes ? max_new_nodes - result.body_nodes : 0;
    Wiring wiring;
    std::string why = wiring_of(n, body, opset, wiring);
    if (why.empty()) why = reason_to_keep(n, *body, wiring, *count, budget);
    if (!why.empty()) {
      result.skipped.push_back(std::move(why));
      nodes.push_back(std::move(n));
      continue;
    }
    std::vector<Node> unrolled = LoopUnroller(g, n, *body, std::move(wiring), taken, opset).unroll(*count);
    ++result.unrolled;
    result.iterations += static_cast<size_t>(*count);
    result.body_nodes += unrolled.size();
    for (auto& u : unrolled) nodes.push_back(std::move(u));
  }
  g.nodes = std::move(nodes);
  return result;
}

}  // namespace reduce
