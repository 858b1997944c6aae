// The Q/DQ search (precision/quantization.h): the plan (quantized nodes, their weights' float values),
// the float model's outputs, the error each quantized node adds, and the keep-set search over them.
#include "precision/quantization.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "adapters/engine_spec.h"
#include "core/extract.h"
#include "oracle/error_origin.h"
#include "oracle/recorded_values.h"

#include "keep_set_search.h"
#include "core/progress_estimate.h"

namespace reduce {

namespace {

bool is_float_type(DType t) { return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16; }

using Producers = std::unordered_map<std::string_view, size_t>;

Producers producers_of(const Graph& g) {
  Producers out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) out.emplace(o, i);
  return out;
}

// The constant behind a value: an initializer or a Constant node's `value`; null otherwise.
const Tensor* constant_value(const Graph& g, const Producers& producers, const std::string& name) {
  if (const Initializer* init = g.find_initializer(name)) return &init->tensor;
  auto it = producers.find(name);
  if (it == producers.end() || !is_constant_node(g.nodes[it->second])) return nullptr;
  const Attribute* a = g.nodes[it->second].attribute("value");
  return a && a->kind == Attribute::Kind::Tensor ? &a->t : nullptr;
}

std::set<std::string> input_names(const Graph& g) {
  std::set<std::string> out;
  for (const auto& in : g.inputs)
    if (!g.find_initializer(in.name)) out.insert(in.name);
  return out;
}

std::set<std::string> output_names(const Graph& g) {
  std::set<std::string> out;
  for (const auto& o : g.outputs) out.insert(o.name);
  return out;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Status same_interface(const Model& quantized, const Model& float_model, const std::string& source) {
  if (input_names(quantized.graph) != input_names(float_model.graph))
    return Error{source, "its inputs (" + joined(input_names(float_model.graph)) + ") are not the quantized model's (" +
                             joined(input_names(quantized.graph)) + ")"};
  if (output_names(quantized.graph) != output_names(float_model.graph))
    return Error{source, "its outputs (" + joined(output_names(float_model.graph)) + ") are not the quantized model's (" +
                             joined(output_names(quantized.graph)) + ")"};
  return {};
}

Expected<TensorMap> run_on_reference(Engine& reference, const Model& model, const std::vector<NamedTensor>& inputs) {
  REDUCE_ASSIGN(auto prepared, reference.prepare(model));
  TensorMap feed;
  for (const auto& in : inputs) feed[in.name] = in.tensor;
  return prepared->run(feed);
}

// A hint for each quantized node: the float model's node of the same name and op type, else (the
// same network from another exporter names its nodes its own way) the K-th node of that op type
// when both graphs have as many nodes of it. Only a hint: weights are taken by value (below).
struct Hint {
  size_t node = 0;
  bool by_name = false;
};

std::unordered_map<size_t, Hint> matching_nodes(const Graph& q, const Graph& f, const QuantizedSearchPlan& plan) {
  std::unordered_map<std::string_view, size_t> by_name;
  std::unordered_map<std::string_view, std::vector<size_t>> q_by_op, f_by_op;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (!f.nodes[i].name.empty()) by_name.emplace(f.nodes[i].name, i);
    f_by_op[f.nodes[i].op_type].push_back(i);
  }
  for (size_t i = 0; i < q.nodes.size(); ++i) q_by_op[q.nodes[i].op_type].push_back(i);
  std::unordered_map<size_t, Hint> out;
  for (const QuantizedNode& qn : plan.nodes) {
    const Node& node = q.nodes[qn.node];
    if (auto it = by_name.find(node.name); !node.name.empty() && it != by_name.end() && f.nodes[it->second].op_type == node.op_type) {
      out.emplace(qn.node, Hint{it->second, true});
      continue;
    }
    const auto& mine = q_by_op[node.op_type];
    const auto& theirs = f_by_op[node.op_type];
    if (mine.size() != theirs.size()) continue;
    const size_t k = static_cast<size_t>(std::lower_bound(mine.begin(), mine.end(), qn.node) - mine.begin());
    out.emplace(qn.node, Hint{theirs[k], false});
  }
  return out;
}

// The largest quantization step of a DequantizeLinear (its scale input, when constant); 0 unknown.
double largest_step(const Graph& q, const Producers& producers, const Node& dequantize) {
  const Tensor* scale = dequantize.inputs.size() > 1 ? constant_value(q, producers, dequantize.inputs[1]) : nullptr;
  double step = 0;
  for (uint64_t i = 0; scale && i < scale->elements(); ++i) step = std::max(step, std::abs(scale->element_as_double(i)));
  return step;
}

// Whether a float weight is what the quantized one was made from: each element within one
// quantization step of the dequantized value (rounding moves it half a step at most).
bool made_from(const Tensor& dequantized, const Tensor& weight, double step) {
  if (step <= 0 || !is_float_type(weight.dtype()) || weight.shape() != dequantized.shape()) return false;
  for (uint64_t i = 0; i < weight.elements(); ++i)
    if (!(std::abs(weight.element_as_double(i) - dequantized.element_as_double(i)) <= step)) return false;
  return true;
}

// Every float constant of a graph, by shape (Constant nodes are initializers since import).
std::map<Shape, std::vector<const Tensor*>> float_constants(const Graph& f) {
  std::map<Shape, std::vector<const Tensor*>> out;
  for (const auto& init : f.initializers)
    if (is_float_type(init.tensor.dtype())) out[init.tensor.shape()].push_back(&init.tensor);
  return out;
}

// Replaces each dequantized weight by the float model's weight it was made from: the hinted node's
// weight at the same input, else any float constant of its shape within a quantization step of it.
// Names and places are never trusted alone (another exporter orders same-shape layers its own
// way). Error: a float model that gives no weight (silently keeping them all dequantized would
// compare the model with itself and blame nothing).
Status weights_from(const Model& quantized, const Model& float_model, const std::string& source, QuantizedSearchPlan& plan) {
  const Graph& q = quantized.graph;
  const Graph& f = float_model.graph;
  const Producers q_producers = producers_of(q), f_producers = producers_of(f);
  const std::unordered_map<size_t, Hint> hints = matching_nodes(q, f, plan);
  const auto by_shape = float_constants(f);
  size_t quantized_weights = 0;
  std::set<std::string> replaced;  // a weight read by several nodes is replaced once
  for (const QuantizedNode& qn : plan.nodes) {
    enum { None, ByName, ByPlace, ByValue } how = None;
    for (const DequantizedInput& in : qn.inputs) {
      if (!in.weight()) continue;
      ++quantized_weights;
      auto folded = plan.float_weights.find(in.float_value);
      if (folded == plan.float_weights.end() || replaced.count(in.float_value)) continue;
      const double step = largest_step(q, q_producers, q.nodes[in.dequantize]);
      const Tensor* found = nullptr;
      auto hint = hints.find(qn.node);
      if (hint != hints.end() && in.input < f.nodes[hint->second.node].inputs.size())
        if (const Tensor* t = constant_value(f, f_producers, f.nodes[hint->second.node].inputs[in.input]);
            t && made_from(folded->second, *t, step))
          found = t, how = std::max(how, hint->second.by_name ? ByName : ByPlace);
      if (auto same = by_shape.find(folded->second.shape()); !found && same != by_shape.end())
        for (const Tensor* t : same->second)
          if (made_from(folded->second, *t, step)) {
            found = t, how = ByValue;
            break;
          }
      if (!found) continue;
      replaced.insert(in.float_value);
      folded->second = *found;
      ++plan.weights_from_float_model;
      --plan.weights_folded;
    }
    if (how == ByName) ++plan.nodes_matched_by_name;
    if (how == ByPlace) ++plan.nodes_matched_by_place;
    if (how == ByValue) ++plan.nodes_matched_by_value;
  }
  if (quantized_weights > 0 && plan.weights_from_float_model == 0)
    return Error{source, "no quantized weight has its float value here: none of the " + std::to_string(plan.nodes.size()) +
                             " quantized nodes reads a weight that a float constant of this model is within one "
                             "quantization step of (is it this network's float model?)"};
  return {};
}

// Dequantizes the weights without a float value yet: their DequantizeLinear nodes (with the
// Constant nodes they read) as one model, run by the reference.
Status fold_weights(const Model& quantized, Engine& reference, QuantizedSearchPlan& plan) {
  const Graph& q = quantized.graph;
  const Producers producers = producers_of(q);
  std::set<size_t> nodes;
  std::vector<std::string> outputs;
  for (const QuantizedNode& qn : plan.nodes)
    for (const DequantizedInput& in : qn.inputs) {
      if (!in.weight() || plan.float_weights.count(in.float_value) || !nodes.insert(in.dequantize).second) continue;
      outputs.push_back(in.float_value);
      for (const auto& v : q.nodes[in.dequantize].inputs)
        if (auto it = v.empty() ? producers.end() : producers.find(v); it != producers.end()) nodes.insert(it->second);
    }
  if (outputs.empty()) return {};
  REDUCE_ASSIGN(const Extractor extractor, Extractor::create(quantized));
  ExtractOptions options;
  options.outputs = outputs;
  const std::vector<size_t> picked(nodes.begin(), nodes.end());
  REDUCE_ASSIGN(const Model weights, extractor.extract(picked, options));
  REDUCE_ASSIGN(TensorMap values, run_on_reference(reference, weights, {}));
  for (const auto& name : outputs) {
    auto it = values.find(name);
    if (it == values.end()) return make_error("the reference gave no value for the dequantized weight '" + name + "'");
    plan.float_weights.emplace(name, std::move(it->second));
    ++plan.weights_folded;
  }
  return {};
}

// Whole-model reference runs the output ranking may take: quantized nodes x model nodes.
constexpr size_t kSensitivityWork = 4'000'000;

// Per quantized node, the outputs' error (error / tolerance, the worst output) of the model with
// only that node quantized, on the reference: one run per node, so only while the work stays
// within kSensitivityWork and options.max_local_runs; empty otherwise.
std::map<size_t, double> output_sensitivity(Oracle& failing, const QuantizedSearchPlan& plan, Engine& reference,
                                            const PrecisionOptions& options, const std::atomic<bool>* cancel) {
  std::map<size_t, double> out;
  const Model& model = failing.model();
  if (plan.nodes.size() > options.max_local_runs || plan.nodes.size() * count_nodes(model.graph) > kSensitivityWork) {
    if (options.log) options.log("ranking: too large to run each quantized node alone in the whole model; local errors only");
    return out;
  }
  std::vector<size_t> all;
  for (const auto& qn : plan.nodes) all.push_back(qn.node);
  ProgressLine progress("ranking: quantized nodes run alone quantized", options.log);
  for (size_t k = 0; k < all.size(); ++k) {
    if (cancel && cancel->load()) return {};
    progress(k, all.size());
    std::vector<size_t> others = all;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
    auto variant = leave_in_float(model, plan.nodes, others, plan.float_weights);
    if (!variant) continue;
    auto values = run_on_reference(reference, *variant, failing.inputs());
    if (!values) continue;
    double worst = 0;
    for (const auto& o : model.graph.outputs)
      if (auto it = values->find(o.name); it != values->end())
        if (const Tensor* expected = failing.recorded().find(o.name))
          worst = std::max(worst, error_score(compare_tensors(o.name, it->second, *expected, failing.options().tolerance)));
    out[all[k]] = worst;
  }
  if (options.log)
    options.log("ranking: by the output error with each quantized node alone quantized (" + std::to_string(all.size()) +
                " reference runs)");
  return out;
}

}  // namespace

Expected<QuantizedSearchPlan> plan_quantized_search(const Model& quantized, std::optional<Model> float_model,
                                                    const std::string& float_source, Engine& reference) {
  QuantizedSearchPlan plan;
  plan.nodes = quantized_nodes(quantized.graph);
  if (plan.nodes.empty())
    return make_error("no node reads a dequantized value (a QuantizeLinear/DequantizeLinear pair or a dequantized "
                      "weight): nothing is quantized");
  if (float_model) REDUCE_TRY(same_interface(quantized, *float_model, float_source));
  REDUCE_TRY(fold_weights(quantized, reference, plan));
  if (float_model) REDUCE_TRY(weights_from(quantized, *float_model, float_source, plan));
  if (float_model) {
    plan.float_model = std::move(*float_model);
    plan.float_model_source = float_source;
  } else {
    std::vector<size_t> all;
    for (const auto& qn : plan.nodes) all.push_back(qn.node);
    REDUCE_ASSIGN(plan.float_model, leave_in_float(quantized, plan.nodes, all, plan.float_weights));
  }
  return plan;
}

Expected<std::vector<NamedTensor>> float_model_outputs(const QuantizedSearchPlan& plan, const Model& quantized,
                                                       Engine& reference, const std::vector<NamedTensor>& inputs) {
  REDUCE_ASSIGN(TensorMap values, run_on_reference(reference, plan.float_model, inputs));
  std::vector<NamedTensor> out;
  for (const auto& o : quantized.graph.outputs) {
    auto it = values.find(o.name);
    if (it == values.end()) return make_error("the float model gave no value for the output '" + o.name + "'");
    out.push_back({o.name, std::move(it->second)});
  }
  return out;
}

Expected<std::vector<QuantizationError>> quantization_errors(const Model& quantized, const QuantizedSearchPlan& plan,
                                                             Engine& reference, const std::vector<NamedTensor>& inputs,
                                                             const Tolerance& tolerance, bool accumulated,
                                                             const std::atomic<bool>* cancel) {
  std::vector<size_t> all;
  for (const auto& qn : plan.nodes) all.push_back(qn.node);
  // The values every node reads in float: the model with every quantized node left in float.
  REDUCE_ASSIGN(const Model in_float, leave_in_float(quantized, plan.nodes, all, plan.float_weights));
  RecordOptions record;
  record.cancel = cancel;
  REDUCE_ASSIGN(const RecordedValues float_values, RecordedValues::record(in_float, reference, inputs, record));
  std::optional<RecordedValues> quantized_values;
  if (accumulated) {
    REDUCE_ASSIGN(RecordedValues values, RecordedValues::record(quantized, reference, inputs, record));
    quantized_values.emplace(std::move(values));
  }
  REDUCE_ASSIGN(const Extractor extractor, Extractor::create(quantized));
  std::vector<QuantizationError> out;
  for (const QuantizedNode& qn : plan.nodes) {
    if (cancel && cancel->load()) return make_error("interrupted");
    const Node& node = quantized.graph.nodes[qn.node];
    // The node with its own QuantizeLinear/DequantizeLinear inputs, fed the float values.
    std::vector<size_t> nodes{qn.node};
    for (const DequantizedInput& in : qn.inputs) {
      nodes.push_back(in.dequantize);
      if (in.quantize) nodes.push_back(*in.quantize);
    }
    ExtractOptions options;
    for (const auto& o : node.outputs)
      if (!o.empty() && float_values.find(o)) options.outputs.push_back(o);
    if (options.outputs.empty()) continue;
    auto alone = extractor.extract(nodes, options);
    if (!alone) continue;
    std::vector<NamedTensor> feed;
    bool fed = true;
    for (const auto& in : alone->graph.inputs) {
      if (alone->graph.find_initializer(in.name)) continue;
      const Tensor* value = float_values.find(in.name);
      if (!value) {
        fed = false;
        break;
      }
      feed.push_back({in.name, *value});
    }
    if (!fed) continue;
    auto computed = run_on_reference(reference, *alone, feed);
    if (!computed) continue;
    for (const auto& o : options.outputs) {
      auto it = computed->find(o);
      if (it == computed->end()) continue;
      QuantizationError e;
      e.node = qn.node;
      e.value = o;
      e.added = compare_tensors(o, it->second, *float_values.find(o), tolerance);
      if (quantized_values)
        if (const Tensor* carried = quantized_values->find(o)) e.accumulated = compare_tensors(o, *carried, *float_values.find(o), tolerance);
      out.push_back(std::move(e));
    }
  }
  return out;
}

ErrorOrigin quantization_origin(const std::vector<QuantizationError>& errors) {
  ErrorOrigin origin;
  for (const auto& e : errors) {
    ValueError v;
    v.node = e.node;
    v.value = e.value;
    v.local = e.added;
    if (e.accumulated) v.accumulated = *e.accumulated;
    origin.values.push_back(std::move(v));
  }
  std::stable_sort(origin.values.begin(), origin.values.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  for (size_t i = 0; i < origin.values.size(); ++i)
    if (adds_error(origin.values[i])) origin.top_local.push_back(i);
  std::stable_sort(origin.top_local.begin(), origin.top_local.end(), [&](size_t a, size_t b) {
    return error_score(*origin.values[a].local) > error_score(*origin.values[b].local);
  });
  origin.local_runs = errors.size();
  return origin;
}


namespace {

// `variant` (the model with some nodes left in float: the same graph inputs and outputs) on the
// engine under test, with the model's inputs and its recorded outputs as they are (no whole-model
// extraction per check). A check: script decides alone where no output was recorded.
Verdict run_variant(Oracle& sample, Model variant, const std::atomic<bool>* cancel) {
  const bool script = sample.spec() && !sample.spec()->gives_values();
  CandidateRun run{std::move(variant), sample.inputs(), {}};
  for (const auto& vi : sample.model().graph.outputs) {
    const Tensor* t = sample.recorded().find(vi.name);
    if (!t && script) continue;
    if (!t) return Verdict::invalid_because("no recorded value for output '" + vi.name + "'");
    run.expected.push_back({vi.name, *t});
  }
  return sample.evaluate_probe(run, cancel);
}

}  // namespace

Expected<PrecisionOutcome> find_float_nodes(std::vector<Oracle*> samples, const QuantizedSearchPlan& plan,
                                            const PrecisionOptions& options, std::stop_token stop) {
  if (samples.empty()) return make_error("no input sample");
  if (!is_precision_strategy(options.strategy)) return make_error("unknown precision strategy '" + options.strategy + "'");
  const Graph& g = samples[0]->model().graph;
  KeepSetProblem problem;
  for (const auto& qn : plan.nodes) {
    if (qn.node >= g.nodes.size()) return make_error("the plan is not of this model");
    if (g.nodes[qn.node].name.empty())
      return make_error("node " + std::to_string(qn.node) + " (" + g.nodes[qn.node].op_type + ") has no name");
    problem.candidates.push_back(qn.node);
  }
  std::sort(problem.candidates.begin(), problem.candidates.end());
  REDUCE_ASSIGN(std::unique_ptr<Engine> reference,
                make_engine(samples[0]->reference_spec(), samples[0]->options().environment));

  std::atomic<bool> cancelled{false};
  std::stop_callback on_stop(stop, [&] { cancelled = true; });
  problem.kept = "left in float";
  problem.check = [&](Oracle& sample, const std::vector<size_t>& set, const std::atomic<bool>* cancel) {
    auto variant = leave_in_float(sample.model(), plan.nodes, set, plan.float_weights);
    if (!variant) return Verdict::invalid_because(variant.error().message());
    return run_variant(sample, std::move(*variant), cancel);
  };
  problem.rank = [&](Oracle& failing, std::map<size_t, double>& local_error, std::optional<ErrorOrigin>&) {
    auto errors = quantization_errors(failing.model(), plan, *reference, failing.inputs(), failing.options().tolerance,
                                      false, &cancelled);
    if (!errors) {
      if (options.log) options.log("ranking: " + errors.error().message() + "; nodes unranked");
      return std::vector<size_t>{};
    }
    // A node's score: the worst of its outputs.
    for (const auto& e : *errors) local_error[e.node] = std::max(local_error[e.node], error_score(e.added));
    size_t beyond = 0;
    for (const auto& [node, score] : local_error) beyond += score > 1;
    if (options.log)
      options.log("ranking: " + std::to_string(beyond) + " of " + std::to_string(plan.nodes.size()) +
                  " quantized nodes add error beyond the tolerance alone");
    // Where no node stands out alone, error accumulates: rank by what each node alone does to the
    // outputs (the model with only it quantized, on the reference), when that is cheap enough.
    const auto output_error = beyond == 0 ? output_sensitivity(failing, plan, *reference, options, &cancelled)
                                          : std::map<size_t, double>{};
    std::vector<std::tuple<double, double, size_t>> scored;
    for (const auto& [node, score] : local_error) {
      auto it = output_error.find(node);
      scored.emplace_back(-(it == output_error.end() ? 0.0 : it->second), -score, node);
    }
    std::stable_sort(scored.begin(), scored.end());
    std::vector<size_t> ranking;
    for (const auto& [outputs, local, node] : scored) ranking.push_back(node);
    return ranking;
  };
  PrecisionOutcome out;
  out.candidates = problem.candidates.size();
  out.samples = samples.size();
  out.quantization = PrecisionOutcome::Quantization{plan.float_model_source,   plan.weights_from_float_model,
                                                    plan.weights_folded,         plan.nodes.size(),
                                                    plan.nodes_matched_by_name,  plan.nodes_matched_by_place,
                                                    plan.nodes_matched_by_value};
  bool searched = false;
  REDUCE_TRY(search_keep_set(samples, problem, options, cancelled, out, searched));
  return out;
}

}  // namespace reduce
