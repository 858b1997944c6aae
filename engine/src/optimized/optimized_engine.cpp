// The optimized engine: per requested output set, a plan (the graph rewritten by the passes of
// passes.def, weights rounded to the precision) run by the reference executor with fused kernels,
// the optimized Resize, and rounding of every float value a kernel produces.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/version.h"
#include "core/extract.h"
#include "core/validate.h"
#include "core/tensor_set.h"
#include "fused_kernel.h"
#include "kernel_quantize_half_away.h"
#include "kernel_resize.h"
#include "mixed_precision.h"
#include "plan_graph.h"
#include "rounding.h"
#include "reference/executor.h"

namespace reduce::opt {

#define OPT_PASS(name, function, help) Expected<int> function(PlanGraph&);
#include "passes.def"
#undef OPT_PASS

namespace {

struct PassEntry {
  const char* name;
  PassFunction function;
};
const PassEntry kPasses[] = {
#define OPT_PASS(name, function, help) {name, &function},
#include "passes.def"
#undef OPT_PASS
};

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Fault cast-fp16-conflict: the builder refuses a Cast to float/double when the engine runs in
// fp16/bf16, as TensorRT's builder does when a layer's output type conflicts with the precision
// (a Cast kept in FP32 has no conflict).
Status check_cast_precision(const Graph& graph, const Fp32Nodes& fp32) {
  for (const Node& n : graph.nodes) {
    const Attribute* to = n.attribute("to");
    if (n.op_type == "Cast" && (n.domain.empty() || n.domain == "ai.onnx") && to && !fp32.contains(n.name) &&
        (to->i == static_cast<int64_t>(DType::Float) || to->i == static_cast<int64_t>(DType::Double)))
      return make_error("Cast layer " + (!n.name.empty() || n.outputs.empty() ? n.name : n.outputs[0]) +
                        ": output type conflicts with precision constraint");
    for (const Attribute& a : n.attributes) {
      if (a.g) REDUCE_TRY(check_cast_precision(*a.g, fp32));
      for (const auto& g : a.graphs) REDUCE_TRY(check_cast_precision(*g, fp32));
    }
  }
  return {};
}

// Weights of a MiB or more are rounded at use, at every run (round_weights_at_use: by a MatMul as it
// reads each block, or by a conversion right before another reader), rather than stored rounded
// once per prepared model: rounding costs about what reading the weight costs, and a stored copy
// would add the weights' size per candidate.
constexpr size_t kRoundAtUseBytes = size_t{1} << 20;

bool rounds_at_use(const Tensor& weight, Precision precision) {
  return precision != Precision::FP32 && (weight.dtype() == DType::Float || weight.dtype() == DType::Double) &&
         weight.byte_size() >= kRoundAtUseBytes;
}

// Initializer name -> (the model's tensor, the same rounded to the precision); weights that are
// rounded at use are not in it.
using RoundedWeights = std::unordered_map<std::string, std::pair<Tensor, Tensor>>;

struct Plan {
  std::unique_ptr<Model> model;
  FusedParts parts;
  std::unique_ptr<PreparedModel> executor;
  OptimizationReport report;
  Fp32Boundaries fp32;                           // FP32 graph inputs and weights
  std::unordered_set<const Node*> fp32_nodes;    // nodes whose outputs are stored in FP32
};

class PlanBuilder {
 public:
  // `rounded` holds the model's initializers rounded to the precision once (shared by every plan).
  PlanBuilder(const Model& model, const RoundedWeights& rounded, const ValueTypes& types,
              const BodyValueTypes& body_types, const OptimizedOptions& options)
      : model_(model), rounded_(rounded), types_(types), body_types_(body_types), options_(options) {}

  Expected<std::shared_ptr<Plan>> build(const std::vector<std::string>& outputs) const {
    if (options_.precision != Precision::FP32 && options_.has(Fault::CastFp16Conflict))
      REDUCE_TRY(check_cast_precision(model_.graph, options_.fp32_nodes));
    auto plan = std::make_shared<Plan>();
    plan->model = std::make_unique<Model>(model_);
    Graph& graph = plan->model->graph;
    graph.outputs.clear();
    for (const auto& name : outputs) {
      const ValueInfo* declared = model_.graph.find_value_info(name);
      graph.outputs.push_back(declared ? *declared : ValueInfo{name, {}, {}});
    }
    plan->report.nodes_before = model_.graph.nodes.size();
    for (const auto& pass : kPasses) plan->report.rewrites.emplace_back(pass.name, 0);
    std::unordered_set<std::string> names;
    add_names(graph, names);
    PlanGraph editor(*plan->model, plan->parts, types_, options_, names);
    REDUCE_TRY(run_passes(editor, plan->report));
    Bodies bodies{*plan, names, {}, options_.fp32_nodes};
    REDUCE_TRY(optimize_bodies(graph, bodies, {}));
    REDUCE_ASSIGN(plan->fp32, insert_precision_boundaries(editor));
    plan->report.nodes_after = graph.nodes.size();
    // Passes fold in fp32, as engine builders do; then every weight is stored in the precision:
    // the original ones from the shared rounded copies, those the passes made rounded here, and
    // large ones rounded at use.
    std::vector<std::string> large;
    for (auto& init : graph.initializers) {
      auto it = rounded_.find(init.name);
      if (plan->fp32.weights.count(init.name)) continue;
      if (it != rounded_.end() && init.tensor.shares_storage_with(it->second.first)) init.tensor = it->second.second;
      else if (rounds_at_use(init.tensor, options_.precision)) large.push_back(init.name);
      else REDUCE_TRY(round_to_precision(init.tensor, options_.precision, false));
    }
    const std::vector<std::string> declined = round_weights_at_use(editor, large);
    for (auto& init : graph.initializers)
      if (std::find(declined.begin(), declined.end(), init.name) != declined.end())
        REDUCE_TRY(round_to_precision(init.tensor, options_.precision, false));
    plan->fp32_nodes = fp32_nodes_of(editor, bodies.fp32);  // after the last node is added
    std::set<Fault> armed = editor.armed_faults();
    armed.insert(bodies.armed.begin(), bodies.armed.end());
    const int64_t opset = plan->model->opset("").value_or(0);
    for (const Node& n : graph.nodes)
      if (options_.has(Fault::ResizeHalfPixel) && resize_half_pixel_triggers(n, opset)) armed.insert(Fault::ResizeHalfPixel);
      else if (options_.has(Fault::QuantizeHalfAway) && quantize_half_away_triggers(n)) armed.insert(Fault::QuantizeHalfAway);
    if (options_.has(Fault::InputBindingOrder) && runtime_inputs(model_.graph).size() >= 2)
      armed.insert(Fault::InputBindingOrder);
    plan->report.armed_faults.assign(armed.begin(), armed.end());
    REDUCE_ASSIGN(plan->executor, ref::prepare_with_hooks(*plan->model, options_.threads, hooks(*plan, opset), options_.limits));
    return plan;
  }

 private:
  // Runs the passes of passes.def (those not disabled) on one graph of the plan, adding their
  // rewrites to the report.
  Status run_passes(PlanGraph& editor, OptimizationReport& report) const {
    for (size_t p = 0; p < std::size(kPasses); ++p) {
      if (contains(options_.disabled_passes, kPasses[p].name)) continue;
      editor.refresh();
      auto done = kPasses[p].function(editor);
      if (!done) return Error{{}, std::string("pass ") + kPasses[p].name + ": " + done.error().what};
      report.rewrites[p].second += *done;
    }
    editor.refresh();
    return {};
  }

  static void add_names(const Graph& graph, std::unordered_set<std::string>& names) {
    for (const auto& vi : graph.inputs) names.insert(vi.name);
    for (const auto& init : graph.initializers) names.insert(init.name);
    for (const Node& n : graph.nodes) {
      names.insert(n.name);
      for (const auto& o : n.outputs) names.insert(o);
      for (const auto& a : n.attributes) {
        if (a.g) add_names(*a.g, names);
        for (const auto& g : a.graphs) add_names(*g, names);
      }
    }
  }

  // What optimizing the bodies of a plan shares: names, the faults their passes armed, and the
  // FP32 node names with the fused nodes made of FP32 nodes inside bodies.
  struct Bodies {
    Plan& plan;
    std::unordered_set<std::string>& names;
    std::set<Fault> armed;
    Fp32Nodes fp32;
  };

  // Rewrites the subgraph bodies of `graph` (If branches, Loop and Scan bodies, at any depth) with
  // the same passes, as deployment engines fuse inside conditionals and loops too: each body is a
  // plan graph of its own whose outputs are the body's, typed by inference inside the body.
  // `outer`: the weights `graph` sees from enclosing scopes.
  Status optimize_bodies(Graph& graph, Bodies& bodies, const PlanGraph::OuterConstants& outer) const {
    if (std::none_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return n.has_subgraphs(); })) return {};
    const PlanGraph::OuterConstants visible = visible_from(graph, outer);
    for (Node& n : graph.nodes)
      for (Attribute& a : n.attributes) {
        if (a.g) {
          REDUCE_ASSIGN(a.g, optimize_body(a.g, bodies, visible));
        }
        for (auto& sub : a.graphs) {
          REDUCE_ASSIGN(sub, optimize_body(sub, bodies, visible));
        }
      }
    return {};
  }

  // The weights a body of `graph` sees: those `graph` sees, without the names it defines, and its own.
  static PlanGraph::OuterConstants visible_from(const Graph& graph, const PlanGraph::OuterConstants& outer) {
    PlanGraph::OuterConstants visible = outer;
    for (const auto& vi : graph.inputs) visible.erase(vi.name);
    for (const Node& n : graph.nodes)
      for (const auto& o : n.outputs) visible.erase(o);
    for (const auto& init : graph.initializers) visible[init.name] = &init.tensor;
    for (const auto& vi : graph.inputs) visible.erase(vi.name);  // an input overrides its initializer
    return visible;
  }

  Expected<std::shared_ptr<const Graph>> optimize_body(const std::shared_ptr<const Graph>& body, Bodies& bodies,
                                                       const PlanGraph::OuterConstants& outer) const {
    static const ValueTypes kUntyped;
    Model m;
    m.ir_version = bodies.plan.model->ir_version;
    m.opset_imports = bodies.plan.model->opset_imports;
    m.graph = *body;
    auto types = body_types_.find(body.get());
    PlanGraph editor(m, bodies.plan.parts, types != body_types_.end() ? types->second : kUntyped, options_, bodies.names);
    editor.see_outer_constants(&outer);
    REDUCE_TRY(run_passes(editor, bodies.plan.report));
    bodies.armed.insert(editor.armed_faults().begin(), editor.armed_faults().end());
    // The body's weights are stored in the precision too, except those an FP32 node reads.
    std::unordered_set<std::string> read_in_fp32;
    for (const Node& n : m.graph.nodes) {
      const bool fp32 = editor.runs_in_fp32(n);
      if (fp32) read_in_fp32.insert(n.inputs.begin(), n.inputs.end());
      if (fp32 && n.domain == kFusedDomain && !bodies.fp32.contains(n.name)) bodies.fp32.names.push_back(n.name);
    }
    for (auto& init : m.graph.initializers)
      if (!read_in_fp32.count(init.name)) REDUCE_TRY(round_to_precision(init.tensor, options_.precision, false));
    REDUCE_TRY(optimize_bodies(m.graph, bodies, outer));
    return std::shared_ptr<const Graph>(std::make_shared<Graph>(std::move(m.graph)));
  }

  ref::ExecutorHooks hooks(const Plan& plan, int64_t default_opset) const {
    ref::ExecutorHooks h;
    const FusedParts* parts = &plan.parts;
    const OptimizedOptions options = options_;
    h.make_kernel = [parts, options, default_opset](const Node& node, int64_t opset) -> Expected<KernelPtr> {
      if (node.domain == kFusedDomain && node.op_type == kToReducedPrecision)
        return make_precision_conversion(options.precision);
      if (node.domain == kFusedDomain) {
        // Only nodes the passes made: a model cannot call the fused kernels itself.
        FusedKernelFactory factory = find_fused_kernel(node.op_type);
        auto it = parts->find(node.name);
        if (!factory || it == parts->end())
          return make_error(std::string("unsupported operator ") + kFusedDomain + "." + node.op_type);
        return factory(FusedKernelSpec{node, it->second, default_opset, options});
      }
      if (node.op_type == "Resize" && (node.domain.empty() || node.domain == "ai.onnx"))
        return make_resize_kernel(node, opset, options);
      if (quantize_half_away_triggers(node)) return make_quantize_kernel(node, opset, options);
      return KernelPtr();
    };
    if (options_.precision != Precision::FP32) {
      const Precision p = options_.precision;
      const std::unordered_set<const Node*>* fp32 = &plan.fp32_nodes;
      h.finish_output = [p, fp32](const Node& node, Tensor& t) {
        return fp32->count(&node) ? Status() : round_to_precision(t, p, true);
      };
    }
    return h;
  }

  const Model& model_;
  const RoundedWeights& rounded_;
  const ValueTypes& types_;
  const BodyValueTypes& body_types_;
  const OptimizedOptions& options_;
};

class OptimizedModel : public OptimizedPreparedModel {
 public:
  OptimizedModel(const Model& model, RoundedWeights rounded, ValueTypes types, BodyValueTypes body_types,
                 OptimizedOptions options)
      : model_(model),
        rounded_(std::move(rounded)),
        types_(std::move(types)),
        body_types_(std::move(body_types)),
        options_(std::move(options)) {}

  // Plans run on the reference executor, which streams.
  bool streams_outputs() const override { return true; }
  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    std::vector<std::string> wanted = options.outputs;
    if (wanted.empty())
      for (const auto& vi : model_.graph.outputs) wanted.push_back(vi.name);
    REDUCE_ASSIGN(std::shared_ptr<Plan> plan, plan_for(wanted));
    TensorMap feed = bind(inputs);
    for (auto& [name, t] : feed)
      if (!plan->fp32.inputs.count(name)) REDUCE_TRY(round_to_precision(t, options_.precision, false));
    RunOptions run_options = options;
    run_options.outputs = std::move(wanted);
    return plan->executor->run(feed, run_options);
  }

  Expected<OptimizationReport> report(const std::vector<std::string>& outputs) override {
    std::vector<std::string> wanted = outputs;
    if (wanted.empty())
      for (const auto& vi : model_.graph.outputs) wanted.push_back(vi.name);
    REDUCE_ASSIGN(std::shared_ptr<Plan> plan, plan_for(wanted));
    return plan->report;
  }

  Expected<std::shared_ptr<Plan>> plan_for(std::vector<std::string> outputs) {
    std::sort(outputs.begin(), outputs.end());
    outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
    std::lock_guard lock(mu_);
    auto it = plans_.find(outputs);
    if (it != plans_.end()) return it->second;
    REDUCE_ASSIGN(auto plan, PlanBuilder(model_, rounded_, types_, body_types_, options_).build(outputs));
    // A reducer asks for many output sets: keep memory bounded (runs in flight hold their plan).
    if (plans_.size() >= kMaxCachedPlans) plans_.clear();
    plans_.emplace(outputs, plan);
    return plan;
  }

 private:
  // Fault input-binding-order: with two or more runtime inputs, the given tensors are taken in
  // alphabetical order of their names and bound to the inputs in declaration order.
  TensorMap bind(const TensorMap& inputs) const {
    if (!options_.has(Fault::InputBindingOrder)) return inputs;
    const auto declared = runtime_inputs(model_.graph);
    if (declared.size() < 2) return inputs;
    std::vector<const Tensor*> given;  // alphabetical: TensorMap is ordered by name
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    for (const auto& entry : inputs) {
      const std::string& name = entry.first;
      if (std::any_of(declared.begin(), declared.end(), [&](const ValueInfo* vi) { return vi->name == name; }))
        given.push_back(&entry.second);
    }
    TensorMap bound = inputs;
    for (size_t k = 0; k < given.size() && k < declared.size(); ++k) bound[declared[k]->name] = *given[k];
    return bound;
  }

  static constexpr size_t kMaxCachedPlans = 16;
  const Model& model_;
  RoundedWeights rounded_;
  ValueTypes types_;
  BodyValueTypes body_types_;  // keyed by the bodies of model_, which every plan's copy shares
  OptimizedOptions options_;
  std::mutex mu_;
  std::map<std::vector<std::string>, std::shared_ptr<Plan>> plans_;
};

class OptimizedEngine : public Engine {
 public:
  explicit OptimizedEngine(OptimizedOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "opt"; }
  std::string release() const override { return std::string("reduce ") + kReduceVersion; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    // Fusions hand inputs to reference kernels directly: arity and attributes are checked first.
    REDUCE_TRY(validate_model(model));
    // Shapes and types drive the static specializations; a model ONNX cannot infer gets none.
    BodyValueTypes body_types;
    auto inferred = infer_value_types(model, &body_types);
    ValueTypes types = inferred ? std::move(*inferred) : ValueTypes{};  // body_types is filled only on success
    RoundedWeights rounded;
    for (const auto& w : model.graph.initializers) {
      if (rounds_at_use(w.tensor, options_.precision)) continue;
      Tensor r = w.tensor;
      REDUCE_TRY(round_to_precision(r, options_.precision, false));
      rounded.emplace(w.name, std::make_pair(w.tensor, std::move(r)));
    }
    auto prepared = std::make_unique<OptimizedModel>(model, std::move(rounded), std::move(types), std::move(body_types), options_);
    std::vector<std::string> outputs;
    for (const auto& vi : model.graph.outputs) outputs.push_back(vi.name);
    REDUCE_TRY(prepared->plan_for(outputs));
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  OptimizedOptions options_;
};

}  // namespace

}  // namespace reduce::opt

namespace reduce {

std::unique_ptr<Engine> make_optimized_engine(const OptimizedOptions& options) {
  return std::make_unique<opt::OptimizedEngine>(options);
}

int OptimizationReport::fired(std::string_view pass) const {
  for (const auto& [name, n] : rewrites)
    if (name == pass) return n;
  return 0;
}

bool OptimizationReport::armed(Fault fault) const {
  return std::find(armed_faults.begin(), armed_faults.end(), fault) != armed_faults.end();
}

std::string OptimizationReport::to_string() const {
  std::string out = std::to_string(nodes_before) + " -> " + std::to_string(nodes_after) + " nodes;";
  for (const auto& [name, n] : rewrites) out += " " + name + " " + std::to_string(n) + ",";
  out.pop_back();
  out += "; faults armed:";
  for (Fault f : armed_faults) out += " " + std::string(fault_name(f));
  if (armed_faults.empty()) out += " none";
  return out;
}

}  // namespace reduce
