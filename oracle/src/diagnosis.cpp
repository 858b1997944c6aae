// The variants of `reduce check --diagnose`, each checked on the engine under test.
#include "oracle/diagnosis.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "oracle/layer_comparison.h"

namespace reduce {

namespace {

bool is_float(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

DiagnosisLine line(std::string dependency, std::string variant) {
  DiagnosisLine l;
  l.dependency = std::move(dependency);
  l.variant = std::move(variant);
  return l;
}

void not_applicable(DiagnosisLine& l, const std::string& why, std::string meaning) {
  l.outcome = VariantOutcome::NotApplicable;
  l.verdict = "n/a: " + why;
  l.meaning = std::move(meaning);
}

// Sets outcome, verdict and the meaning for a pass or a fail. Only the original's failure, as the
// oracle's target judges it (--fail-regex included), is a fail: a variant that fails another way
// says nothing about the dependency, and calling it "fails" would rule one out wrongly.
void decide(DiagnosisLine& l, const Oracle& oracle, const Verdict& v, std::string if_passes, std::string if_fails) {
  if (v.invalid) return not_applicable(l, v.invalid_reason, "the variant cannot be checked, so it says nothing");
  switch (oracle.target().match(v)) {
    case SignatureMatch::Pass:
      l.outcome = VariantOutcome::Passes;
      l.verdict = "passes";
      l.meaning = std::move(if_passes);
      return;
    case SignatureMatch::Same:
      l.outcome = VariantOutcome::Fails;
      l.verdict = "fails (same failure)";
      l.meaning = std::move(if_fails);
      return;
    case SignatureMatch::Different:
      l.outcome = VariantOutcome::FailsOtherwise;
      l.verdict = "fails otherwise (" + v.signature.to_string() + ")";
      l.meaning = "inconclusive: the original's failure is gone but the variant fails another way, so it neither shows nor rules out this dependency";
      return;
  }
}

// The verdict of a variant of the model (other model, inputs or engine) with the oracle's options
// otherwise: a fresh oracle records the reference on it. The reference failing makes it invalid.
Verdict check_variant(const Oracle& oracle, const Model& model, std::vector<NamedTensor> inputs, OracleOptions options,
                      const std::atomic<bool>* cancel) {
  options.slots = 1;
  auto variant = Oracle::create(model, std::move(inputs), std::move(options));
  if (!variant) return Verdict::invalid_because(variant.error().message());
  (*variant)->target().set(oracle.target().signature());
  return (*variant)->evaluate(Candidate::whole(model.graph), cancel);
}

// Every float node in FP32, through the engine's own per-node precision (engine/fp32_nodes.h).
DiagnosisLine precision_variant(const Oracle& oracle, const std::atomic<bool>* cancel) {
  DiagnosisLine l = line("precision", "every float node in FP32");
  const OracleOptions& options = oracle.options();
  const EngineSpec* spec = oracle.spec();
  if (!spec || !spec->controls_precision()) {
    not_applicable(l, "the engine takes no per-node precision",
                   "only opt:fp16/bf16, trt:fp16/bf16/int8 and cmd:/check: templates using {fp32_nodes} or {fp32_nodes_file} can keep nodes in FP32");
    return l;
  }
  // Unnamed nodes get names: a node set names nodes.
  Model model = oracle.model();
  std::unordered_set<std::string> taken;
  for (const Node& n : model.graph.nodes) taken.insert(n.name);
  Fp32Nodes nodes;
  size_t fresh = 0;
  for (Node& n : model.graph.nodes) {
    bool produces_float = false;
    for (const auto& v : n.outputs)
      if (const Tensor* t = v.empty() ? nullptr : oracle.recorded().find(v)) produces_float |= is_float(t->dtype());
    if (!produces_float) continue;
    if (n.name.empty()) {
      do n.name = "diagnose_" + std::to_string(fresh++);
      while (!taken.insert(n.name).second);
    }
    if (!nodes.contains(n.name)) nodes.names.push_back(n.name);
  }
  if (nodes.empty()) {
    not_applicable(l, "no node computes a float value", "precision cannot matter without float values");
    return l;
  }
  auto pinned = with_fp32_nodes(*spec, nodes);
  OracleOptions variant = options;
  variant.engine = to_string(*pinned);
  l.variant += " (" + std::to_string(nodes.names.size()) + " nodes)";
  decide(l, oracle, check_variant(oracle, model, oracle.inputs(), variant, cancel),
         "a precision problem: the failure disappears with every float node in FP32, so keeping a few nodes in FP32 should fix it",
         "not a precision problem: it fails even with every float node in FP32");
  return l;
}

// Every intermediate value marked as an output: nothing can be fused across values.
DiagnosisLine fusion_variant(Oracle& oracle, const std::atomic<bool>* cancel) {
  DiagnosisLine l = line("fusion", "every intermediate value marked as an output");
  const Graph& g = oracle.model().graph;
  Candidate c = Candidate::whole(g);
  std::unordered_set<std::string> outputs;
  for (const auto& vi : g.outputs) {
    c.outputs.push_back(vi.name);
    outputs.insert(vi.name);
  }
  const std::unordered_set<std::string> outputs_of_model = outputs;
  for (size_t i : oracle.extractor().index().topological_order())
    for (const auto& v : g.nodes[i].outputs)
      if (!v.empty() && oracle.recorded().find(v) && outputs.insert(v).second) c.outputs.push_back(v);
  Verdict v = oracle.evaluate(c, cancel);
  // Only the model's own outputs decide; intermediates may differ within the engine's precision.
  if (!v.invalid && compares_outputs(v.signature.kind)) {
    std::vector<OutputComparison> own;
    for (const auto& cmp : v.outputs)
      if (outputs_of_model.count(cmp.name)) own.push_back(cmp);
    v.signature = signature_of_outputs(own);
  }
  decide(l, oracle, v,
         "depends on a fusion: when no value can be fused away the outputs are right (the layerwise table of reduce compare cannot locate it)",
         "does not depend on fusing across values: it fails with every intermediate value marked as an output");
  return l;
}

// The existing binding diagnosis: some permutation of same-typed inputs makes the engine agree.
DiagnosisLine binding_variant(Oracle& oracle, const std::atomic<bool>* cancel) {
  DiagnosisLine l = line("input binding", "inputs of one type and shape bound in another order");
  std::set<std::pair<int, Shape>> seen;
  bool confusable = false;
  for (const auto& in : oracle.inputs())
    confusable |= !seen.insert({static_cast<int>(in.tensor.dtype()), in.tensor.shape()}).second;
  if (!confusable) {
    not_applicable(l, "no two inputs of one type and shape", "inputs an engine could confuse need one type and shape");
    return l;
  }
  if (oracle.spec() && !oracle.spec()->gives_values()) {
    not_applicable(l, "a check: script gives no outputs to compare", "only engines that return outputs can be compared per order");
    return l;
  }
  auto mapping = diagnose_input_binding(oracle, cancel);
  if (mapping) {
    l.outcome = VariantOutcome::Passes;
    l.verdict = "passes when";
    bool first = true;
    for (const auto& [input, given] : *mapping) {
      l.verdict += std::string(first ? " '" : ", '") + input + "' gets '" + given + "'";
      first = false;
    }
    l.meaning = "depends on input binding: the engine binds the inputs in another order than the model declares";
  } else {
    l.outcome = VariantOutcome::Fails;
    l.verdict = "fails for every order";
    l.meaning = "does not depend on the order in which same-typed inputs are bound";
  }
  return l;
}

// The model with the leading dim of every input whose leading dim is static made symbolic.
std::optional<Model> with_dynamic_batch(const Model& model) {
  Model out = model;
  bool changed = false;
  for (auto& vi : out.graph.inputs) {
    if (out.graph.find_initializer(vi.name) || !vi.type.is_tensor() || !vi.type.has_shape || vi.type.dims.empty() ||
        !vi.type.dims[0].is_static())
      continue;
    vi.type.dims[0] = Dim::symbolic("batch");
    changed = true;
  }
  if (!changed) return std::nullopt;
  out.graph.value_info.clear();
  for (auto& vi : out.graph.outputs) {
    vi.type.dims.clear();
    vi.type.has_shape = false;
  }
  return out;
}

Expected<Tensor> doubled(const Tensor& t) {
  if (t.rank() == 0) return t;
  Shape shape = t.shape();
  shape[0] *= 2;
  std::vector<std::byte> bytes(t.bytes().begin(), t.bytes().end());
  bytes.insert(bytes.end(), t.bytes().begin(), t.bytes().end());
  return Tensor::copy_of(t.dtype(), std::move(shape), bytes);
}

Expected<Tensor> scaled(const Tensor& t, double factor) {
  REDUCE_ASSIGN(Tensor out, Tensor::copy_of(t.dtype(), t.shape(), t.bytes()));
  if (t.dtype() == DType::Float)
    for (float& x : out.mutable_data<float>()) x = static_cast<float>(x * factor);
  if (t.dtype() == DType::Double)
    for (double& x : out.mutable_data<double>()) x *= factor;
  return out;
}

std::vector<DiagnosisLine> batch_variants(const Oracle& oracle, const std::atomic<bool>* cancel) {
  DiagnosisLine dynamic = line("static batch", "batch dimension made dynamic (same inputs)");
  DiagnosisLine two = line("batch 1", "dynamic batch, every input repeated to batch 2");
  const auto model = with_dynamic_batch(oracle.model());
  if (!model) {
    for (DiagnosisLine* l : {&dynamic, &two})
      not_applicable(*l, "no input has a static leading dimension", "the batch dimension of a model without one cannot matter");
    return {dynamic, two};
  }
  decide(dynamic, oracle, check_variant(oracle, *model, oracle.inputs(), oracle.options(), cancel),
         "depends on a static batch: the same inputs pass with a dynamic batch, so code specialized for the static shape is wrong",
         "does not depend on the batch dimension being static");
  std::vector<NamedTensor> inputs = oracle.inputs();
  for (auto& in : inputs) {
    const ValueInfo* vi = nullptr;
    for (const auto& declared : model->graph.inputs)
      if (declared.name == in.name) vi = &declared;
    if (!vi || vi->type.dims.empty() || vi->type.dims[0].is_static()) continue;
    auto d = doubled(in.tensor);
    if (d) in.tensor = std::move(*d);
  }
  decide(two, oracle, check_variant(oracle, *model, std::move(inputs), oracle.options(), cancel),
         "depends on batch 1: the same samples pass as a batch of 2 (a batch-1 specialization or broadcast is wrong)",
         "fails with batch 2 as well: not specific to batch 1");
  return {dynamic, two};
}

DiagnosisLine range_variant(const Oracle& oracle, const std::atomic<bool>* cancel) {
  DiagnosisLine l = line("input range", "float inputs scaled by 0.1");
  std::vector<NamedTensor> inputs = oracle.inputs();
  bool any = false;
  for (auto& in : inputs) {
    if (in.tensor.dtype() != DType::Float && in.tensor.dtype() != DType::Double) continue;
    auto s = scaled(in.tensor, 0.1);
    if (!s) continue;
    in.tensor = std::move(*s);
    any = true;
  }
  if (!any) {
    not_applicable(l, "no float32/float64 input", "the range of inputs that are not float cannot be scaled");
    return l;
  }
  decide(l, oracle, check_variant(oracle, oracle.model(), std::move(inputs), oracle.options(), cancel),
         "depends on the input range: smaller inputs pass, so random inputs may exaggerate it; check with realistic data (--inputs, --input-range)",
         "does not depend on the input range: it fails with inputs 10x smaller too");
  return l;
}

}  // namespace

std::vector<std::string> Diagnosis::dependencies_with(VariantOutcome outcome) const {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.outcome == outcome) out.push_back(l.dependency);
  return out;
}

Expected<Diagnosis> diagnose(Oracle& oracle, const std::atomic<bool>* cancel) {
  Diagnosis d;
  auto cancelled = [&] { return cancel && cancel->load(); };
  d.lines.push_back(precision_variant(oracle, cancel));
  if (cancelled()) return make_error("interrupted");
  d.lines.push_back(fusion_variant(oracle, cancel));
  if (cancelled()) return make_error("interrupted");
  d.lines.push_back(binding_variant(oracle, cancel));
  if (cancelled()) return make_error("interrupted");
  for (auto& l : batch_variants(oracle, cancel)) d.lines.push_back(std::move(l));
  if (cancelled()) return make_error("interrupted");
  d.lines.push_back(range_variant(oracle, cancel));
  if (cancelled()) return make_error("interrupted");
  return d;
}

}  // namespace reduce
