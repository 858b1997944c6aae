// Body nodes: their numbering, and their removal from the bodies of kept control-flow nodes.
#include "core/body_nodes.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype.h"
#include "subgraph_names.h"

namespace reduce {

namespace {

using detail::NameMap;
using detail::mapped;

constexpr uint64_t kMaxZeroElements = uint64_t{1} << 20;

// The bodies of a node, in numbering order.
std::vector<const Graph*> bodies_of(const Node& n) {
  std::vector<const Graph*> out;
  for (const auto& a : n.attributes) {
    if (a.g) out.push_back(a.g.get());
    for (const auto& sub : a.graphs) out.push_back(sub.get());
  }
  return out;
}

const ValueType* find_type(const std::unordered_map<std::string, ValueType>* types, const std::string& name) {
  if (!types) return nullptr;
  auto it = types->find(name);
  return it == types->end() ? nullptr : &it->second;
}

// Same element type and shape: static dims equal, symbolic ones of the same name.
bool same_type(const ValueType& a, const ValueType& b) {
  if (!a.is_tensor() || !b.is_tensor() || a.elem_type != b.elem_type || !a.has_shape || !b.has_shape ||
      a.dims.size() != b.dims.size())
    return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Dim &x = a.dims[i], &y = b.dims[i];
    const bool equal = x.is_static() ? y.is_static() && x.value == y.value : !y.is_static() && !x.param.empty() && x.param == y.param;
    if (!equal) return false;
  }
  return true;
}

// A zero tensor of the type, when its shape is static and small enough.
std::optional<Tensor> zeros_of(const ValueType& t) {
  if (!t.is_tensor() || !t.has_shape) return std::nullopt;
  const auto dtype = dtype_from_onnx(t.elem_type);
  if (!dtype || dtype_size(*dtype) == 0) return std::nullopt;
  Shape shape;
  uint64_t elements = 1;
  for (const Dim& d : t.dims) {
    if (!d.is_static()) return std::nullopt;
    shape.push_back(d.value);
    elements *= static_cast<uint64_t>(std::max<int64_t>(d.value, 1));
    if (elements > kMaxZeroElements) return std::nullopt;
  }
  auto z = Tensor::allocate(*dtype, shape);
  if (!z) return std::nullopt;
  return std::move(z).value();
}

// The names a graph's nodes (their subgraphs included) and outputs read.
std::unordered_set<std::string> read_in(const Graph& g) {
  std::unordered_set<std::string> read;
  for (const auto& n : g.nodes) {
    read.insert(n.inputs.begin(), n.inputs.end());
    read.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& o : g.outputs) read.insert(o.name);
  return read;
}

// Drops the weights nothing reads any more (a body's own weights are most of a model like Silero's).
void drop_unread_weights(Graph& g) {
  const auto read = read_in(g);
  std::erase_if(g.initializers, [&](const Initializer& init) { return !read.count(init.name); });
}

// Drops graph inputs and weights that nothing reads any more.
void drop_unread(Graph& g) {
  const auto read = read_in(g);
  std::erase_if(g.inputs, [&](const ValueInfo& vi) { return !read.count(vi.name); });
  drop_unread_weights(g);
}

// Rebuilds bodies without the removed ids, walking them in numbering order.
class BodyEdit {
 public:
  BodyEdit(const BodyNodes& numbering, std::span<const size_t> removed, const BodyValueTypes& types)
      : numbering_(numbering), removed_(removed), types_(types) {}

  // Edits the bodies of `node`, whose body nodes are numbered from `next` on (advanced past them).
  Status edit_node(Node& node, size_t& next) const {
    bool changed = false;
    for (auto& a : node.attributes) {
      if (a.g) {
        REDUCE_ASSIGN(auto body, edit_body(a.g, next));
        changed |= body != a.g;
        a.g = std::move(body);
      }
      for (auto& sub : a.graphs) {
        REDUCE_ASSIGN(auto body, edit_body(sub, next));
        changed |= body != sub;
        sub = std::move(body);
      }
    }
    if (changed) node.implicit_inputs = detail::implicit_inputs_of(node);
    return {};
  }

 private:
  bool any_removed(size_t first, size_t end) const {
    auto it = std::lower_bound(removed_.begin(), removed_.end(), first);
    return it != removed_.end() && *it < end;
  }
  bool is_removed(size_t id) const { return std::binary_search(removed_.begin(), removed_.end(), id); }

  Expected<std::shared_ptr<const Graph>> edit_body(const std::shared_ptr<const Graph>& body, size_t& next) const {
    const size_t first = next;
    std::vector<size_t> ids(body->nodes.size());
    for (size_t p = 0; p < ids.size(); ++p) {
      ids[p] = next;
      next = numbering_[next].end;
    }
    if (!any_removed(first, next)) return body;
    auto out = std::make_shared<Graph>(*body);
    out->nodes.clear();
    std::vector<const Node*> gone;
    for (size_t p = 0; p < ids.size(); ++p) {
      if (is_removed(ids[p])) {
        gone.push_back(&body->nodes[p]);
        continue;
      }
      Node n = body->nodes[p];
      size_t inner = ids[p] + 1;
      REDUCE_TRY(edit_node(n, inner));
      out->nodes.push_back(std::move(n));
    }
    auto it = types_.find(body.get());
    REDUCE_TRY(replace_values(*out, gone, it == types_.end() ? nullptr : &it->second));
    return std::shared_ptr<const Graph>(std::move(out));
  }

  static Status replace_values(Graph& body, const std::vector<const Node*>& gone,
                               const std::unordered_map<std::string, ValueType>* types);
  static void return_through_identity(Graph& body);

  const BodyNodes& numbering_;
  std::span<const size_t> removed_;
  const BodyValueTypes& types_;
};

// Gives every value of a removed node that the body still reads its replacement (see
// remove_body_nodes): another value of its type, or zeros; an error when it has neither.
Status BodyEdit::replace_values(Graph& body, const std::vector<const Node*>& gone,
                                const std::unordered_map<std::string, ValueType>* types) {
  NameMap by;                                    // removed value -> the value that replaces it
  std::map<std::string, ValueType> zeros;        // removed values that become zero weights
  std::map<std::string, std::string> unresolved; // removed values nothing replaces -> why
  for (const Node* n : gone)
    for (const auto& o : n->outputs) {
      if (o.empty()) continue;
      const ValueType* t = find_type(types, o);
      for (const auto& in : n->inputs) {
        const std::string s = mapped(by, in);
        if (!t || in.empty() || unresolved.count(s)) continue;
        const ValueType* ts = zeros.count(s) ? &zeros.at(s) : find_type(types, s);
        if (ts && same_type(*t, *ts)) {
          by[o] = s;
          break;
        }
      }
      if (by.count(o)) continue;
      if (t && zeros_of(*t)) zeros.emplace(o, *t);
      else
        unresolved.emplace(o, "body node '" + n->name + "' (" + n->op_type + ") cannot be removed: nothing of type " +
                                  (t ? t->to_string() : std::string("unknown")) + " replaces its output '" + o + "'");
    }
  std::vector<std::string> read;
  for (const auto& n : body.nodes) {
    read.insert(read.end(), n.inputs.begin(), n.inputs.end());
    read.insert(read.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  for (const auto& o : body.outputs) read.push_back(o.name);
  std::unordered_set<std::string> made;
  for (const auto& r : read) {
    const std::string s = mapped(by, r);
    if (auto u = unresolved.find(s); u != unresolved.end()) return make_error(u->second);
    if (auto z = zeros.find(s); z != zeros.end() && made.insert(s).second)
      body.initializers.push_back(Initializer{s, *zeros_of(z->second), {}, std::nullopt});
  }
  std::erase_if(body.value_info, [&](const ValueInfo& vi) { return by.count(vi.name) || unresolved.count(vi.name); });
  detail::rename_in_graph(body, by);
  drop_unread_weights(body);
  return_through_identity(body);
  return {};
}

// A body output that no node of the body makes any more (the outer value, body input or weight that
// replaced it) is returned through an Identity: ONNX Runtime refuses a subgraph that returns an
// outer-scope value directly ("Subgraph output (x) is an outer scope value being returned
// directly"), and an engine refusing the candidate is not the failure being reduced.
void BodyEdit::return_through_identity(Graph& body) {
  std::unordered_set<std::string> names;
  for (const auto& n : body.nodes) names.insert(n.outputs.begin(), n.outputs.end());
  const std::unordered_set<std::string> made = names;
  for (const auto& vi : body.inputs) names.insert(vi.name);
  for (const auto& init : body.initializers) names.insert(init.name);
  for (auto& out : body.outputs) {
    if (out.name.empty() || made.count(out.name)) continue;
    std::string fresh = out.name + "_returned";
    for (int k = 1; names.count(fresh); ++k) fresh = out.name + "_returned" + std::to_string(k);
    names.insert(fresh);
    Node identity;
    identity.name = fresh;
    identity.op_type = "Identity";
    identity.inputs = {out.name};
    identity.outputs = {fresh};
    body.nodes.push_back(std::move(identity));
    out.name = fresh;
  }
}


}  // namespace

BodyNodes::BodyNodes(const Graph& graph) : ranges_(graph.nodes.size()) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const size_t first = nodes_.size();
    for (const Graph* b : bodies_of(graph.nodes[i])) number(*b, i);
    ranges_[i] = {first, nodes_.size()};
  }
}

void BodyNodes::number(const Graph& body, size_t owner) {
  for (size_t p = 0; p < body.nodes.size(); ++p) {
    const size_t id = nodes_.size();
    nodes_.push_back({owner, &body, p, 0});
    for (const Graph* b : bodies_of(body.nodes[p])) number(*b, owner);
    nodes_[id].end = nodes_.size();
  }
}

Node* find_extracted_node(Model& extracted, const Graph& original, size_t index) {
  if (index >= original.nodes.size()) return nullptr;
  const Node& node = original.nodes[index];
  auto it = std::find_if(extracted.graph.nodes.begin(), extracted.graph.nodes.end(),
                         [&](const Node& n) { return n.op_type == node.op_type && n.outputs == node.outputs; });
  return it == extracted.graph.nodes.end() ? nullptr : &*it;
}

Status remove_body_nodes(Model& extracted, const Graph& original, const BodyNodes& numbering,
                         std::span<const size_t> removed, const BodyValueTypes& types) {
  if (removed.empty()) return {};
  if (!std::is_sorted(removed.begin(), removed.end()) || removed.back() >= numbering.size())
    return make_error("the removed body nodes are not sorted ids of the graph's " + std::to_string(numbering.size()) + " body nodes");
  const BodyEdit edit(numbering, removed, types);
  for (size_t i = 0; i < original.nodes.size(); ++i) {
    auto [first, end] = numbering.range_of(i);
    auto it = std::lower_bound(removed.begin(), removed.end(), first);
    if (it == removed.end() || *it >= end) continue;
    Node* n = find_extracted_node(extracted, original, i);
    if (!n) return make_error("body nodes of node " + std::to_string(i) + " are removed, but it is not kept");
    REDUCE_TRY(edit.edit_node(*n, first));
  }
  drop_unread(extracted.graph);
  return {};
}

}  // namespace reduce
