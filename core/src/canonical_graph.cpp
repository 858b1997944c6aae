// Canonical graph form: each value is labelled by the expression that computes it (op type,
// attributes, labels of its inputs), graph inputs by their type; the form is the sorted labels of
// the outputs.
#include "core/canonical_graph.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/graph_index.h"

namespace reduce {

namespace {

std::string attribute_text(const Attribute& a) {
  std::string s = a.name + "=";
  switch (a.kind) {
    case Attribute::Kind::Int: return s + std::to_string(a.i);
    case Attribute::Kind::Float: return s + std::to_string(a.f);
    case Attribute::Kind::String: return s + a.s;
    case Attribute::Kind::Ints:
      for (int64_t v : a.ints) s += std::to_string(v) + ",";
      return s;
    case Attribute::Kind::Floats:
      for (float v : a.floats) s += std::to_string(v) + ",";
      return s;
    default: return s + "?";
  }
}

}  // namespace

std::string canonical_form(const Graph& g) {
  std::map<std::string, std::string> label;
  for (const auto& vi : g.inputs) label[vi.name] = "in:" + vi.type.to_string();
  for (const auto& init : g.initializers)
    label[init.name] = "const:" + std::string(dtype_name(init.tensor.dtype())) + shape_to_string(init.tensor.shape());
  auto index = GraphIndex::build(g);
  if (!index) return "invalid graph";
  for (size_t i : index->topological_order()) {
    const Node& n = g.nodes[i];
    std::string expr = n.domain + n.op_type;
    std::vector<std::string> attrs;
    for (const auto& a : n.attributes) attrs.push_back(attribute_text(a));
    std::sort(attrs.begin(), attrs.end());
    expr += "<";
    for (const auto& a : attrs) expr += a + ";";
    expr += ">(";
    for (const auto& v : n.inputs) expr += (v.empty() ? std::string("-") : label[v]) + ",";
    expr += ")";
    // Long expressions are replaced by a short digest so deep graphs do not grow exponentially.
    if (expr.size() > 256) {
      uint64_t h = 1469598103934665603ull;
      for (char c : expr) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
      expr = n.op_type + "#" + std::to_string(h);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) label[n.outputs[k]] = expr + "." + std::to_string(k);
  }
  std::vector<std::string> outs;
  for (const auto& vi : g.outputs) outs.push_back(label[vi.name]);
  std::sort(outs.begin(), outs.end());
  std::string form;
  for (const auto& o : outs) form += o + "\n";
  return form;
}

}  // namespace reduce
