// Mixed precision: FP32 nodes under fp16/bf16, their unrounded weights and inputs, and the
// ToReducedPrecision conversions in front of reduced-precision readers of FP32 values.
#include "mixed_precision.h"

#include <algorithm>

#include "rounding.h"

namespace reduce::opt {

namespace {

class PrecisionConversion : public ref::Kernel {
 public:
  explicit PrecisionConversion(Precision precision) : precision_(precision) {}
  Status compute(ref::KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (!in) return make_error("ToReducedPrecision: missing input");
    // Shares the input when every element is representable already; else a rounded copy.
    Tensor out = *in;
    REDUCE_TRY(round_to_precision(out, precision_, false));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  Precision precision_;
};

// Adds the nodes of `node`'s bodies that run in FP32: every one when `names` is null (the node
// itself is kept in FP32), else those named in `names`, with all of their own bodies.
void add_body_nodes(const Node& node, const Fp32Nodes* names, std::unordered_set<const Node*>& out) {
  for (const Attribute& a : node.attributes) {
    std::vector<const Graph*> bodies;
    if (a.g) bodies.push_back(a.g.get());
    for (const auto& g : a.graphs) bodies.push_back(g.get());
    for (const Graph* body : bodies)
      for (const Node& n : body->nodes) {
        const bool fp32 = !names || names->contains(n.name);
        if (fp32) out.insert(&n);
        add_body_nodes(n, fp32 ? nullptr : names, out);
      }
  }
}

// Whether `n` is a MatMul reading `w` as its B only.
bool reads_as_weight(const Node& n, const std::string& w) {
  return n.op_type == "MatMul" && (n.domain.empty() || n.domain == "ai.onnx") && n.inputs.size() == 2 &&
         n.inputs[1] == w && n.inputs[0] != w;
}

// Appends a ToReducedPrecision node reading `value`; returns the name of its rounded output.
std::string add_conversion(PlanGraph& g, const std::string& value) {
  Node convert;
  convert.name = g.fresh_name(value + "_to_reduced");
  convert.op_type = kToReducedPrecision;
  convert.domain = kFusedDomain;
  convert.inputs = {value};
  const std::string reduced = g.fresh_name(value + "_reduced");
  convert.outputs = {reduced};
  g.add_node(std::move(convert));
  return reduced;
}

}  // namespace

Expected<Fp32Boundaries> insert_precision_boundaries(PlanGraph& g) {
  Fp32Boundaries out;
  if (g.options().precision == Precision::FP32 || g.options().fp32_nodes.empty()) return out;
  Graph& graph = g.graph();
  const size_t count = g.node_count();
  std::vector<bool> fp32(count);
  for (size_t i = 0; i < count; ++i) fp32[i] = !g.removed(i) && g.runs_in_fp32(g.node(i));
  if (std::none_of(fp32.begin(), fp32.end(), [](bool b) { return b; })) return out;

  // Values stored in FP32, in a stable order: graph inputs FP32 nodes read, then FP32 nodes' outputs.
  std::vector<std::string> stored_fp32;
  for (const auto& vi : graph.inputs) {
    const auto readers = g.consumers(vi.name);
    if (std::any_of(readers.begin(), readers.end(), [&](size_t c) { return fp32[c]; })) {
      out.inputs.insert(vi.name);
      stored_fp32.push_back(vi.name);
    }
  }
  // Weights: FP32 nodes read an unrounded twin (the model's tensor, shared, never copied).
  std::vector<std::pair<std::string, std::string>> twins;  // weight -> twin
  for (size_t i = 0; i < count; ++i) {
    if (!fp32[i]) continue;
    for (const auto& o : g.node(i).outputs)
      if (!o.empty()) stored_fp32.push_back(o);
    const std::vector<std::string> reads = g.node(i).inputs;
    for (const auto& v : reads) {
      if (v.empty() || !g.constant(v)) continue;
      auto it = std::find_if(twins.begin(), twins.end(), [&](const auto& t) { return t.first == v; });
      if (it == twins.end()) {
        twins.emplace_back(v, g.fresh_name(v + "_fp32"));
        it = std::prev(twins.end());
        out.weights.insert(it->second);
        g.add_initializer(it->second, Tensor(*g.constant(v)));
      }
      for (auto& input : graph.nodes[i].inputs)
        if (input == v) input = it->second;
    }
  }
  // Conversions in front of reduced-precision readers, one per FP32 value.
  for (const auto& value : stored_fp32) {
    std::vector<size_t> readers;
    for (size_t c : g.consumers(value)) {
      const auto& inputs = g.node(c).inputs;
      if (c < count && !fp32[c] && std::find(inputs.begin(), inputs.end(), value) != inputs.end()) readers.push_back(c);
    }
    if (readers.empty()) continue;
    const std::string reduced = add_conversion(g, value);
    for (size_t c : readers)
      for (auto& input : graph.nodes[c].inputs)
        if (input == value) input = reduced;
  }
  g.refresh();
  return out;
}

std::vector<std::string> round_weights_at_use(PlanGraph& g, const std::vector<std::string>& weights) {
  std::vector<std::string> declined;
  // (reader, weight) pairs in reader order: the executor runs ready nodes lowest index first, so a
  // conversion appended in this order runs right before its reader, not at the start of the run.
  std::vector<std::pair<size_t, std::string>> reads;
  for (const auto& w : weights) {
    const std::vector<size_t> readers = g.consumers(w);
    const bool explicit_reads_only = std::all_of(readers.begin(), readers.end(), [&](size_t c) {
      const auto& implicit = g.node(c).implicit_inputs;
      return std::find(implicit.begin(), implicit.end(), w) == implicit.end();
    });
    // A requested weight, one a graph input may override, or one a body reads: rounded once.
    if (!g.constant(w) || g.is_output(w) || !explicit_reads_only) {
      declined.push_back(w);
      continue;
    }
    for (size_t c : readers) reads.emplace_back(c, w);
  }
  std::sort(reads.begin(), reads.end());
  for (const auto& [reader, w] : reads) {
    const Node& n = g.node(reader);
    const bool float_weight = g.constant(w)->dtype() == DType::Float;
    // A MatMul rounds its weight block by block as it reads it: not even one whole rounded copy.
    // The same when the MatMul is the producer of a fused activation (its parts read the fused
    // node's inputs in order).
    std::vector<Node>* parts = n.domain == kFusedDomain && n.op_type == "FusedActivation" ? g.parts_of(n.name) : nullptr;
    if (float_weight && parts && !parts->empty() && reads_as_weight((*parts)[0], w) && n.inputs.size() >= 2 &&
        n.inputs[0] != w && n.inputs[1] == w) {
      (*parts)[0].op_type = kMatMulRoundedWeight;
      (*parts)[0].domain = kFusedDomain;
      continue;
    }
    if (float_weight && reads_as_weight(n, w)) {
      Node fused;
      fused.name = g.fresh_name(n.name.empty() ? n.outputs[0] + "_rounded_weight" : n.name + "_rounded_weight");
      fused.op_type = kMatMulRoundedWeight;
      fused.domain = kFusedDomain;
      fused.inputs = n.inputs;
      fused.outputs = n.outputs;
      const size_t nodes[] = {reader};
      g.replace(nodes, std::move(fused));
      continue;
    }
    const std::string reduced = add_conversion(g, w);
    for (auto& input : g.graph().nodes[reader].inputs)
      if (input == w) input = reduced;
  }
  g.refresh();
  return declined;
}

std::unordered_set<const Node*> fp32_nodes_of(const PlanGraph& g, const Fp32Nodes& names) {
  std::unordered_set<const Node*> out;
  if (names.empty()) return out;
  for (size_t i = 0; i < g.node_count(); ++i) {
    const Node& n = g.node(i);
    const bool fp32 = g.runs_in_fp32(n);
    if (fp32) out.insert(&n);
    add_body_nodes(n, fp32 ? nullptr : &names, out);
  }
  return out;
}

ref::KernelPtr make_precision_conversion(Precision precision) {
  return ref::KernelPtr(new PrecisionConversion(precision));
}

}  // namespace reduce::opt
