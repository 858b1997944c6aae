// The optimized engine: per requested output set, a plan (the graph rewritten by the passes of
// passes.def, weights rounded to the precision) run by the reference executor with fused kernels,
// the optimized Resize, and rounding of every float value a kernel produces.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/extract.h"
#include "core/validate.h"
#include "core/tensor_set.h"
#include "fused_kernel.h"
#include "kernel_resize.h"
#include "mixed_precision.h"
#include "plan_graph.h"
#include "precision.h"
#include "reference/executor.h"

namespace reduce::opt {

#define REDUCE_PASS(name, function, help) Expected<int> function(PlanGraph&);
#include "passes.def"
#undef REDUCE_PASS

namespace {

struct PassEntry {
  const char* name;
  PassFunction function;
};
const PassEntry kPasses[] = {
#define REDUCE_PASS(name, function, help) {name, &function},
#include "passes.def"
#undef REDUCE_PASS
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

// Initializer name -> (the model's tensor, the same rounded to the precision).
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
              const OptimizedOptions& options)
      : model_(model), rounded_(rounded), types_(types), options_(options) {}

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
    PlanGraph editor(*plan->model, plan->parts, types_, options_);
    for (const auto& pass : kPasses) {
      int rewrites = 0;
      if (!contains(options_.disabled_passes, pass.name)) {
        editor.refresh();
        auto done = pass.function(editor);
        if (!done) return Error{{}, std::string("pass ") + pass.name + ": " + done.error().what};
        rewrites = *done;
      }
      plan->report.rewrites.emplace_back(pass.name, rewrites);
    }
    editor.refresh();
    REDUCE_ASSIGN(plan->fp32, insert_precision_boundaries(editor));
    plan->fp32_nodes = fp32_nodes_of(editor, options_.fp32_nodes);
    plan->report.nodes_after = graph.nodes.size();
    // Passes fold in fp32, as engine builders do; then every weight is stored in the precision:
    // the original ones from the shared rounded copies, those the passes made rounded here.
    for (auto& init : graph.initializers) {
      auto it = rounded_.find(init.name);
      if (plan->fp32.weights.count(init.name)) continue;
      if (it != rounded_.end() && init.tensor.shares_storage_with(it->second.first)) init.tensor = it->second.second;
      else REDUCE_TRY(round_to_precision(init.tensor, options_.precision, false));
    }
    std::set<Fault> armed = editor.armed_faults();
    const int64_t opset = plan->model->opset("").value_or(0);
    for (const Node& n : graph.nodes)
      if (options_.has(Fault::ResizeHalfPixel) && resize_half_pixel_triggers(n, opset)) armed.insert(Fault::ResizeHalfPixel);
    if (options_.has(Fault::InputBindingOrder) && runtime_inputs(model_.graph).size() >= 2)
      armed.insert(Fault::InputBindingOrder);
    plan->report.armed_faults.assign(armed.begin(), armed.end());
    REDUCE_ASSIGN(plan->executor, ref::prepare_with_hooks(*plan->model, options_.threads, hooks(*plan, opset), options_.limits));
    return plan;
  }

 private:
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
  const OptimizedOptions& options_;
};

class OptimizedModel : public OptimizedPreparedModel {
 public:
  OptimizedModel(const Model& model, RoundedWeights rounded, ValueTypes types, OptimizedOptions options)
      : model_(model), rounded_(std::move(rounded)), types_(std::move(types)), options_(std::move(options)) {}

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
    REDUCE_ASSIGN(auto plan, PlanBuilder(model_, rounded_, types_, options_).build(outputs));
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
  OptimizedOptions options_;
  std::mutex mu_;
  std::map<std::vector<std::string>, std::shared_ptr<Plan>> plans_;
};

class OptimizedEngine : public Engine {
 public:
  explicit OptimizedEngine(OptimizedOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "opt"; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    // Fusions hand inputs to reference kernels directly: arity and attributes are checked first.
    REDUCE_TRY(validate_model(model));
    // Shapes and types drive the static specializations; a model ONNX cannot infer gets none.
    auto inferred = infer_value_types(model);
    ValueTypes types = inferred ? std::move(*inferred) : ValueTypes{};
    RoundedWeights rounded;
    for (const auto& w : model.graph.initializers) {
      Tensor r = w.tensor;
      REDUCE_TRY(round_to_precision(r, options_.precision, false));
      rounded.emplace(w.name, std::make_pair(w.tensor, std::move(r)));
    }
    auto prepared = std::make_unique<OptimizedModel>(model, std::move(rounded), std::move(types), options_);
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
