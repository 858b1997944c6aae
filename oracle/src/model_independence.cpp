// Probe models that share nothing with the user's model, and the decision drawn from their verdicts.
#include "oracle/model_independence.h"

#include <thread>

namespace reduce {

namespace {

constexpr int64_t kBaselineIr = 7;
constexpr int64_t kBaselineOpset = 13;

int64_t default_opset(const Model& m) {
  for (const auto& o : m.opset_imports)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return 0;
}

// The names are ours alone, so that no check keyed on the user's names can tell the probe apart.
Model probe_shell(int64_t ir_version, int64_t opset) {
  Model m;
  m.ir_version = ir_version;
  m.opset_imports = {OpsetImport{"", opset}};
  m.producer_name = "reduce (probe model)";
  m.graph.name = "reduce_probe";
  return m;
}

ValueInfo float_value(const std::string& name, const Shape& shape) {
  return ValueInfo{name, ValueType::tensor(DType::Float, shape), {}};
}

Expected<NamedTensor> float_tensor(const std::string& name, const Shape& shape, std::vector<float> values) {
  REDUCE_ASSIGN(Tensor t, Tensor::from_vector<float>(DType::Float, shape, std::move(values)));
  return NamedTensor{name, std::move(t)};
}

Node make_node(std::string name, std::string op, std::vector<std::string> inputs, std::string output) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(inputs);
  n.outputs = {std::move(output)};
  return n;
}

// Both probes read reduce_probe_x and write reduce_probe_y, float32[1,4] (an engine that echoes
// its command line, as trtexec does, then says the same of both). The values, and their sums with
// the Add probe's weight, are ones FP16, BF16 and FP8 (E4M3) represent exactly.
Expected<ProbeModel> probe_around(std::string description, int64_t ir_version, int64_t opset, std::vector<Node> nodes,
                                  std::vector<float> expected) {
  ProbeModel p{std::move(description), {probe_shell(ir_version, opset), {}, {}}};
  Graph& g = p.run.model.graph;
  const Shape shape{1, 4};
  g.inputs = {float_value("reduce_probe_x", shape)};
  g.outputs = {float_value("reduce_probe_y", shape)};
  g.nodes = std::move(nodes);
  REDUCE_ASSIGN(NamedTensor x, float_tensor("reduce_probe_x", shape, {1.0f, -2.0f, 0.5f, 4.0f}));
  REDUCE_ASSIGN(NamedTensor y, float_tensor("reduce_probe_y", shape, std::move(expected)));
  p.run.inputs = {std::move(x)};
  p.run.expected = {std::move(y)};
  return p;
}

Expected<ProbeModel> identity_probe(int64_t ir_version, int64_t opset) {
  return probe_around("Identity of a float32[1,4] input", ir_version, opset,
                      {make_node("reduce_probe_identity", "Identity", {"reduce_probe_x"}, "reduce_probe_y")},
                      {1.0f, -2.0f, 0.5f, 4.0f});
}

// Real kernels between the input and the output.
Expected<ProbeModel> add_relu_probe(int64_t ir_version, int64_t opset) {
  REDUCE_ASSIGN(ProbeModel p, probe_around("Relu of an Add of a float32[1,4] input and a weight", ir_version, opset,
                                           {make_node("reduce_probe_add", "Add", {"reduce_probe_x", "reduce_probe_w"}, "reduce_probe_sum"),
                                            make_node("reduce_probe_relu", "Relu", {"reduce_probe_sum"}, "reduce_probe_y")},
                                           {1.5f, 0.0f, 0.0f, 6.0f}));
  REDUCE_ASSIGN(NamedTensor weight, float_tensor("reduce_probe_w", Shape{1, 4}, {0.5f, 1.0f, -1.0f, 2.0f}));
  p.run.model.graph.initializers = {Initializer{weight.name, weight.tensor, {}, std::nullopt}};
  return p;
}

const char* described(SignatureMatch m) {
  switch (m) {
    case SignatureMatch::Same: return "fails the same way";
    case SignatureMatch::Different: return "fails differently";
    case SignatureMatch::Pass: return "passes";
  }
  return "?";
}

}  // namespace

std::vector<ProbeModel> neutral_probes(const Model& original) {
  const int64_t opset = default_opset(original) > 0 ? default_opset(original) : kBaselineOpset;
  std::vector<ProbeModel> out;
  for (auto made : {identity_probe(original.ir_version, opset), add_relu_probe(original.ir_version, opset)})
    if (made) out.push_back(std::move(*made));
  return out;
}

std::optional<ProbeModel> format_probe(const Model& original) {
  const int64_t opset = default_opset(original);
  if (original.ir_version == kBaselineIr && (opset == kBaselineOpset || opset == 0)) return std::nullopt;
  auto made = identity_probe(kBaselineIr, kBaselineOpset);
  if (!made) return std::nullopt;
  made->description += " at IR version 7, opset 13";
  return std::move(*made);
}

const char* to_string(ProbeConclusion c) {
  switch (c) {
    case ProbeConclusion::NotProbed: return "not probed";
    case ProbeConclusion::ModelDependent: return "model-dependent";
    case ProbeConclusion::Mixed: return "mixed";
    case ProbeConclusion::ModelIndependent: return "model-independent";
    case ProbeConclusion::FormatRefused: return "format refused";
  }
  return "?";
}

bool ModelIndependence::any_same() const {
  for (const auto& p : probes)
    if (p.match == SignatureMatch::Same) return true;
  return false;
}

std::vector<std::string> ModelIndependence::lines() const {
  std::vector<std::string> out;
  for (const auto& p : probes) {
    std::string line = p.model + ": " + described(p.match);
    if (p.verdict.signature.fails()) line += " (" + p.verdict.signature.to_string() + ")";
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<Verdict> run_neutral_probes(Oracle& oracle, const std::atomic<bool>* cancel) {
  const std::vector<ProbeModel> probes = neutral_probes(oracle.model());
  std::vector<Verdict> out(probes.size());
  std::vector<std::thread> others;
  for (size_t i = 1; i < probes.size(); ++i)
    others.emplace_back([&, i] { out[i] = oracle.evaluate_probe(probes[i].run, cancel); });
  if (!probes.empty()) out[0] = oracle.evaluate_probe(probes[0].run, cancel);
  for (auto& t : others) t.join();
  return out;
}

ModelIndependence probe_model_independence(Oracle& oracle, const std::atomic<bool>* cancel, std::vector<Verdict> ran) {
  ModelIndependence out;
  const FailureKind kind = oracle.target().signature().kind;
  // A wrong value costs one run to ask about: the second probe only when the first is wrong too.
  const bool values = compares_outputs(kind);
  size_t same = 0;
  for (const ProbeModel& probe : neutral_probes(oracle.model())) {
    if (values && !out.probes.empty() && out.probes.back().match != SignatureMatch::Same) break;
    const size_t k = out.probes.size();
    Verdict v = k < ran.size() ? std::move(ran[k]) : oracle.evaluate_probe(probe.run, cancel);
    if (v.cancelled) {
      out.cancelled = true;
      return out;
    }
    const SignatureMatch m = oracle.target().match(v);
    same += m == SignatureMatch::Same;
    out.probes.push_back(ProbeResult{probe.description, std::move(v), m});
  }
  out.conclusion = same == 0 ? ProbeConclusion::ModelDependent
                   : same < 2 || same < out.probes.size() ? ProbeConclusion::Mixed
                                                          : ProbeConclusion::ModelIndependent;
  if (out.conclusion != ProbeConclusion::ModelIndependent) return out;
  if (std::optional<ProbeModel> older = format_probe(oracle.model())) {
    Verdict v = oracle.evaluate_probe(older->run, cancel);
    if (v.cancelled) {
      out.cancelled = true;
      return out;
    }
    const SignatureMatch m = oracle.target().match(v);
    out.probes.push_back(ProbeResult{older->description, std::move(v), m});
    if (m == SignatureMatch::Pass) {
      out.conclusion = ProbeConclusion::FormatRefused;
      const Model& model = oracle.model();
      out.format = "IR version " + std::to_string(model.ir_version) + ", opset " + std::to_string(default_opset(model));
    }
  }
  return out;
}

}  // namespace reduce
