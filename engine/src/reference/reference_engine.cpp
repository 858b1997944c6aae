// The reference interpreter: runs a graph node by node in topological order with exact kernels.
#include <malloc.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/version.h"
#include "core/graph_algorithms.h"
#include "core/validate.h"
#include "engine/engine.h"
#include "executor.h"
#include "kernel.h"
#include "run_budget.h"

namespace reduce::ref {

namespace {

// Unnamed nodes (common in exported models) are named after their first output.
std::string node_label(const Node& n) {
  if (!n.name.empty() || n.outputs.empty()) return "node '" + n.name + "' (" + n.op_type + ")";
  return "node producing '" + n.outputs[0] + "' (" + n.op_type + ")";
}

// An error of a node's run, naming the node; its kind (a timeout inside a loop body) is kept.
Error at_node(const Node& node, Error e) {
  e.what = node_label(node) + ": " + e.what;
  return e;
}

class GraphProgram;

// Values visible while running one graph: its own, then its initializers, then enclosing frames.
// Values the graph computes are counted against the run's budget while the frame holds them.
struct Frame {
  const GraphProgram* program = nullptr;
  const Frame* parent = nullptr;
  RunBudget* budget = nullptr;
  // Top frame of a streaming run only: wanted values go here as computed (RunOptions::on_output).
  const std::function<Status(const std::string&, Tensor)>* on_output = nullptr;
  std::unordered_map<std::string, Tensor> values;

  Frame() = default;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() {
    for (const auto& [name, bytes] : counted_) budget->release(bytes);
  }
  const Tensor* find(const std::string& name) const;
  // Whether `name` resolves to an initializer (no value of a frame shadows it).
  bool is_initializer(const std::string& name) const;
  // Stores a value a node computed, counting its bytes (fails when the budget has no room).
  Status put(const std::string& name, Tensor value) {
    drop(name);
    REDUCE_TRY(budget->hold(value.byte_size()));
    counted_[name] = value.byte_size();
    values[name] = std::move(value);
    return {};
  }
  void drop(const std::string& name) {
    if (auto it = counted_.find(name); it != counted_.end()) {
      budget->release(it->second);
      counted_.erase(it);
    }
    values.erase(name);
  }

 private:
  std::unordered_map<std::string, uint64_t> counted_;  // computed values held, by name: their bytes
};

// What one run of a graph tracks about its values: the remaining reads of each by the needed nodes,
// so values are freed after their last use; the wanted ones; and in a streaming run whether each
// wanted value was handed to frame.on_output yet.
struct RunValues {
  std::unordered_map<std::string_view, size_t> reads;
  std::unordered_set<std::string_view> keep;
  std::unordered_map<std::string_view, bool> streamed;

  bool was_streamed(std::string_view v) const {
    auto it = streamed.find(v);
    return it != streamed.end() && it->second;
  }
  // A node read `v`: the frame drops it after its last read unless it is wanted and not handed over yet.
  void release(Frame& frame, const std::string& v) {
    auto it = reads.find(v);
    if (it != reads.end() && --it->second == 0 && (!keep.count(v) || was_streamed(v))) frame.drop(v);
  }
};

class NodeContext;

// A graph whose kernels are resolved, ready to run any number of times.
class GraphProgram {
 public:
  static Expected<std::unique_ptr<GraphProgram>> build(const Graph& graph, const Model& model,
                                                      std::shared_ptr<const ExecutorHooks> hooks) {
    auto program = std::unique_ptr<GraphProgram>(new GraphProgram(graph, hooks));
    const auto outer = outer_scope_names(graph);
    REDUCE_ASSIGN(program->index_, GraphIndex::build(graph, outer));
    for (const auto& init : graph.initializers) program->initializers_.emplace(init.name, &init.tensor);
    for (const Node& node : graph.nodes) {
      const int64_t opset = model.opset(node.domain).value_or(0);
      KernelPtr kernel;
      if (hooks->make_kernel) {
        auto hooked = hooks->make_kernel(node, opset);
        if (!hooked) return make_error(node_label(node) + ": " + hooked.error().what);
        kernel = std::move(*hooked);
      }
      if (!kernel) {
        KernelFactory factory = find_kernel(node.op_type, node.domain, opset);
        if (!factory)
          return make_error(node_label(node) + ": unsupported operator " +
                            (node.domain.empty() ? "" : node.domain + ".") + node.op_type + " (opset " +
                            std::to_string(opset) + ")");
        auto built = factory(node, opset);
        if (!built) return make_error(node_label(node) + ": " + built.error().what);
        kernel = std::move(*built);
      }
      program->kernels_.push_back(std::move(kernel));
      program->required_.push_back(required_inputs(node, opset));
      for (const auto& a : node.attributes) {
        std::vector<const Graph*> subs;
        if (a.g) subs.push_back(a.g.get());
        for (const auto& g : a.graphs) subs.push_back(g.get());
        for (const Graph* sub : subs) {
          auto sp = build(*sub, model, hooks);
          if (!sp) return make_error(node_label(node) + " subgraph '" + sub->name + "': " + sp.error().what);
          program->subprograms_.emplace(sub, std::move(*sp));
        }
      }
    }
    return program;
  }

  const Graph& graph() const { return *graph_; }
  const Tensor* initializer(const std::string& name) const {
    auto it = initializers_.find(name);
    return it == initializers_.end() ? nullptr : it->second;
  }
  const GraphProgram* subprogram(const Graph* g) const {
    auto it = subprograms_.find(g);
    return it == subprograms_.end() ? nullptr : it->second.get();
  }

  // Runs the nodes needed for `wanted` in `frame` (inputs already bound) and returns them; in a
  // streaming frame they go to frame.on_output instead (the vector returned is empty then).
  Expected<std::vector<Tensor>> run(Frame& frame, const std::vector<std::string>& wanted) const;

 private:
  Expected<RunValues> plan_values(const Frame& frame, const std::vector<std::string>& wanted, std::vector<bool>& needed) const;
  Status run_node(size_t i, Frame& frame, RunValues& values) const;
  Status store_outputs(const Node& node, NodeContext& ctx, Frame& frame, RunValues& values) const;
  Expected<std::vector<Tensor>> wanted_values(Frame& frame, const std::vector<std::string>& wanted, RunValues& values) const;
  GraphProgram(const Graph& graph, std::shared_ptr<const ExecutorHooks> hooks) : graph_(&graph), hooks_(std::move(hooks)) {}
  const Graph* graph_;
  std::shared_ptr<const ExecutorHooks> hooks_;
  GraphIndex index_;
  std::vector<KernelPtr> kernels_;
  std::vector<std::vector<bool>> required_;  // per node: the inputs its operator requires
  std::unordered_map<std::string, const Tensor*> initializers_;
  std::unordered_map<const Graph*, std::unique_ptr<GraphProgram>> subprograms_;
};

const Tensor* Frame::find(const std::string& name) const {
  for (const Frame* f = this; f; f = f->parent) {
    if (auto it = f->values.find(name); it != f->values.end()) return &it->second;
    if (const Tensor* t = f->program->initializer(name)) return t;
  }
  return nullptr;
}

bool Frame::is_initializer(const std::string& name) const {
  for (const Frame* f = this; f; f = f->parent) {
    if (f->values.count(name)) return false;
    if (f->program->initializer(name)) return true;
  }
  return false;
}

class NodeContext : public KernelContext {
 public:
  NodeContext(const Node& node, const Frame& frame, const GraphProgram& program)
      : node_(node), frame_(frame), program_(program), outputs_(node.outputs.size()), set_(node.outputs.size(), false) {
    for (const auto& name : node.inputs) inputs_.push_back(name.empty() ? nullptr : frame.find(name));
  }
  ~NodeContext() override { frame_.budget->release(reserved_); }
  Status reserve(uint64_t bytes) override {
    REDUCE_TRY(frame_.budget->hold(bytes));
    reserved_ += bytes;
    return {};
  }
  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool input_is_constant(size_t i) const override {
    return i < node_.inputs.size() && !node_.inputs[i].empty() && frame_.is_initializer(node_.inputs[i]);
  }
  size_t output_count() const override { return outputs_.size(); }
  // A kernel may write an output the node does not have (a model built in memory, never
  // validated): an error, never an exception.
  Expected<Tensor*> allocate_output(size_t i, DType dtype, Shape shape) override {
    if (i >= outputs_.size()) return make_error("output " + std::to_string(i) + " is required");
    REDUCE_ASSIGN(uint64_t elements, element_count(shape));
    if (elements <= max_tensor_bytes()) REDUCE_TRY(frame_.budget->fits(elements * dtype_size(dtype)));
    REDUCE_ASSIGN(outputs_[i], Tensor::allocate(dtype, std::move(shape)));
    set_[i] = true;
    return &outputs_[i];
  }
  void set_output(size_t i, Tensor tensor) override {
    if (i >= outputs_.size()) {
      missing_output_ = std::min(missing_output_, i);
      return;
    }
    outputs_[i] = std::move(tensor);
    set_[i] = true;
  }
  // The first output the kernel set that the node does not have, if any.
  std::optional<size_t> missing_output() const {
    return missing_output_ == SIZE_MAX ? std::nullopt : std::optional<size_t>(missing_output_);
  }
  Expected<std::vector<Tensor>> run_subgraph(const Graph& graph, const std::vector<Tensor>& inputs) override {
    REDUCE_TRY(frame_.budget->check());
    const GraphProgram* sub = program_.subprogram(&graph);
    if (!sub) return make_error("subgraph '" + graph.name + "' was not prepared");
    if (inputs.size() != graph.inputs.size())
      return make_error("subgraph '" + graph.name + "' takes " + std::to_string(graph.inputs.size()) +
                        " inputs, got " + std::to_string(inputs.size()));
    Frame child;
    child.program = sub;
    child.parent = &frame_;
    child.budget = frame_.budget;
    for (size_t i = 0; i < inputs.size(); ++i) child.values[graph.inputs[i].name] = inputs[i];
    std::vector<std::string> wanted;
    for (const auto& o : graph.outputs) wanted.push_back(o.name);
    return sub->run(child, wanted);
  }
  // Fails, naming the first one, unless every input marked in `required` (the operator's schema,
  // core/validate.h) is present: kernels may then dereference the inputs their operator requires.
  Status require_inputs(const std::vector<bool>& required) const {
    for (size_t i = 0; i < required.size(); ++i)
      if (required[i] && !input(i)) return make_error("input " + std::to_string(i) + " is required");
    return {};
  }
  bool is_set(size_t i) const { return set_[i]; }
  Tensor& output(size_t i) { return outputs_[i]; }

 private:
  const Node& node_;
  const Frame& frame_;
  const GraphProgram& program_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<bool> set_;
  uint64_t reserved_ = 0;
  size_t missing_output_ = SIZE_MAX;
};

// Marks the nodes `wanted` needs and counts the reads of every value by them.
Expected<RunValues> GraphProgram::plan_values(const Frame& frame, const std::vector<std::string>& wanted,
                                              std::vector<bool>& needed) const {
  const Graph& g = *graph_;
  std::vector<size_t> roots;
  for (const auto& w : wanted) {
    if (auto p = index_.producer(w)) roots.push_back(*p);
    else if (!frame.find(w)) return make_error("no value named '" + w + "' in graph '" + g.name + "'");
  }
  needed = ancestors(index_, roots);
  RunValues values;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!needed[i]) continue;
    for (const auto& v : g.nodes[i].inputs) if (!v.empty()) ++values.reads[v];
    for (const auto& v : g.nodes[i].implicit_inputs) ++values.reads[v];
  }
  values.keep = std::unordered_set<std::string_view>(wanted.begin(), wanted.end());
  // Filled before the run: an allocation that lives through the run, made between two large ones,
  // would split the freed large blocks malloc could otherwise reuse, and the heap would grow by every
  // value handed over.
  if (frame.on_output) {
    values.streamed.reserve(wanted.size());
    for (const auto& w : wanted) values.streamed.emplace(w, false);
  }
  return values;
}

// Runs node i on values of `frame`, stores its outputs, then releases the inputs it read.
Status GraphProgram::run_node(size_t i, Frame& frame, RunValues& values) const {
  const Node& node = graph_->nodes[i];
  if (Status b = frame.budget->check(); !b.ok()) return at_node(node, b.error());
  NodeContext ctx(node, frame, *this);
  for (size_t k = 0; k < node.inputs.size(); ++k)
    if (!node.inputs[k].empty() && !ctx.input(k))
      return make_error(node_label(node) + ": input '" + node.inputs[k] + "' has no value");
  if (Status r = ctx.require_inputs(required_[i]); !r.ok()) return make_error(node_label(node) + ": " + r.error().what);
  Status s = kernels_[i]->compute(ctx);
  if (!s.ok()) return at_node(node, s.error());
  if (auto k = ctx.missing_output()) return make_error(node_label(node) + ": output " + std::to_string(*k) + " is required");
  REDUCE_TRY(store_outputs(node, ctx, frame, values));
  for (const auto& v : node.inputs) if (!v.empty()) values.release(frame, v);
  for (const auto& v : node.implicit_inputs) values.release(frame, v);
  return {};
}

Status GraphProgram::store_outputs(const Node& node, NodeContext& ctx, Frame& frame, RunValues& values) const {
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k].empty()) continue;
    if (!ctx.is_set(k)) return make_error(node_label(node) + ": output " + std::to_string(k) + " was not produced");
    if (hooks_->finish_output)
      if (Status f = hooks_->finish_output(node, ctx.output(k)); !f.ok()) return make_error(node_label(node) + ": " + f.error().what);
    if (Status held = frame.put(node.outputs[k], std::move(ctx.output(k))); !held.ok())
      return make_error(node_label(node) + ": " + held.error().what);
    if (frame.on_output && values.keep.count(node.outputs[k]) && !values.was_streamed(node.outputs[k])) {
      // Handed over now; the frame keeps it only while later nodes read it.
      const std::string& name = node.outputs[k];
      if (Status st = (*frame.on_output)(name, *frame.find(name)); !st.ok()) return st.error();
      values.streamed.find(name)->second = true;
      if (auto it = values.reads.find(name); it == values.reads.end() || it->second == 0) frame.drop(name);
    }
  }
  return {};
}

// The wanted values in order, or in a streaming frame the ones no node computed here (inputs,
// initializers, values of enclosing scopes) handed to frame.on_output, and nothing returned.
Expected<std::vector<Tensor>> GraphProgram::wanted_values(Frame& frame, const std::vector<std::string>& wanted,
                                                          RunValues& values) const {
  std::vector<Tensor> out;
  if (frame.on_output) {
    for (const auto& w : wanted) {
      if (values.was_streamed(w)) continue;
      const Tensor* t = frame.find(w);
      if (!t) return make_error("value '" + w + "' was not computed");
      REDUCE_TRY((*frame.on_output)(w, *t));
      values.streamed.find(w)->second = true;
    }
    return out;
  }
  for (const auto& w : wanted) {
    const Tensor* t = frame.find(w);
    if (!t) return make_error("value '" + w + "' was not computed");
    out.push_back(*t);
  }
  return out;
}

Expected<std::vector<Tensor>> GraphProgram::run(Frame& frame, const std::vector<std::string>& wanted) const {
  std::vector<bool> needed;
  REDUCE_ASSIGN(RunValues values, plan_values(frame, wanted, needed));
  for (size_t i : index_.topological_order())
    if (needed[i]) REDUCE_TRY(run_node(i, frame, values));
  return wanted_values(frame, wanted, values);
}

Status check_input(const ValueInfo& vi, const Tensor& t) {
  if (!vi.type.is_tensor()) return {};
  if (vi.type.elem_type != static_cast<int32_t>(t.dtype()))
    return make_error("input '" + vi.name + "' must be " + vi.type.to_string() + ", got " +
                      std::string(dtype_name(t.dtype())) + shape_to_string(t.shape()));
  if (!vi.type.has_shape) return {};
  bool ok = vi.type.dims.size() == t.rank();
  for (size_t d = 0; ok && d < t.rank(); ++d)
    ok = !vi.type.dims[d].is_static() || vi.type.dims[d].value == t.shape()[d];
  if (!ok)
    return make_error("input '" + vi.name + "' must have shape " + vi.type.to_string() + ", got " +
                      shape_to_string(t.shape()));
  return {};
}

// A run that moved many bytes through the heap gives its free pages back when it ends. glibc keeps
// freed memory in the arena of the thread that allocated it (up to the trim threshold set below,
// and in holes that trimming the top never reaches), so runs on several slots and TBB workers left
// hundreds of MB resident between the reduction's candidates (bench/RESULTS.md, issue 20).
// malloc_trim(0) returns every free page; the next run only touches again what it uses. Small runs
// skip it: their heap is small and the call would cost more than it returns.
struct HeapTrimAfterRun {
  static constexpr uint64_t kMinAllocated = uint64_t{64} << 20;
  const RunBudget& budget;
  ~HeapTrimAfterRun() {
    if (budget.allocated() >= kMinAllocated) malloc_trim(0);
  }
};

class ReferenceModel : public PreparedModel {
 public:
  ReferenceModel(const Model& model, std::unique_ptr<GraphProgram> program, int threads, RunLimits limits)
      : model_(model), program_(std::move(program)), threads_(threads), limits_(limits) {}

  bool streams_outputs() const override { return true; }
  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    if (threads_ <= 0) return run_here(inputs, options);
    tbb::task_arena arena(threads_);
    return arena.execute([&] { return run_here(inputs, options); });
  }

 private:
  Expected<TensorMap> run_here(const TensorMap& inputs, const RunOptions& options) {
    const Graph& g = model_.graph;
    RunBudget budget(limits_, options.cancel);
    // Destroyed after the frame, so the run's values are gone when it trims.
    const HeapTrimAfterRun trim{budget};
    Frame frame;
    frame.program = program_.get();
    frame.budget = &budget;
    std::unordered_set<std::string_view> declared;
    for (const auto& vi : g.inputs) {
      declared.insert(vi.name);
      auto it = inputs.find(vi.name);
      if (it == inputs.end()) {
        if (g.find_initializer(vi.name)) continue;  // an input with a default value
        return make_error("missing input '" + vi.name + "' (" + vi.type.to_string() + ")");
      }
      REDUCE_TRY(check_input(vi, it->second));
      frame.values[vi.name] = it->second;
    }
    for (const auto& [name, t] : inputs)
      if (!declared.count(name)) return make_error("the model has no input named '" + name + "'");
    std::vector<std::string> wanted = options.outputs;
    if (wanted.empty())
      for (const auto& vi : g.outputs) wanted.push_back(vi.name);
    if (options.on_output) {
      frame.on_output = &options.on_output;
      REDUCE_TRY(program_->run(frame, wanted));
      return TensorMap{};
    }
    REDUCE_ASSIGN(auto values, program_->run(frame, wanted));
    TensorMap out;
    for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i]] = std::move(values[i]);
    return out;
  }

  const Model& model_;
  std::unique_ptr<GraphProgram> program_;
  int threads_;
  RunLimits limits_;
};

class ReferenceEngine : public Engine {
 public:
  ReferenceEngine(int threads, RunLimits limits) : threads_(threads), limits_(limits) {}
  std::string name() const override { return "ref"; }
  std::string release() const override { return std::string("reduce ") + kReduceVersion; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    return prepare_with_hooks(model, threads_, {}, limits_);
  }

 private:
  int threads_;
  RunLimits limits_;
};

}  // namespace

Expected<std::unique_ptr<PreparedModel>> prepare_with_hooks(const Model& model, int threads, ExecutorHooks hooks,
                                                            RunLimits limits) {
  auto shared = std::make_shared<const ExecutorHooks>(std::move(hooks));
  REDUCE_ASSIGN(auto program, GraphProgram::build(model.graph, model, shared));
  return std::unique_ptr<PreparedModel>(new ReferenceModel(model, std::move(program), threads, limits));
}

}  // namespace reduce::ref

namespace reduce {
void tune_allocator_for_engines() {
  // Activations of a few MB are allocated and freed for every node. Keeping them in the heap
  // (instead of fresh mmaps, returned to the OS at free) avoids a page fault per 4 KB per node.
  // glibc gives each new thread an arena of its own, up to 8 per core: with two slots and TBB
  // workers, an activation freed in one arena could not hold another thread's next value, and
  // each arena kept its own high-water mark (PP-OCR det at 640x640, `reduce -j 2`: 309 -> 246 MB
  // with one arena per core; bench/RESULTS.md, issue 20). No more arenas than cores: no more
  // threads than that run at once, so contention stays low.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_ARENA_MAX, static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
}

std::unique_ptr<Engine> make_reference_engine(int threads, RunLimits limits) {
  return std::make_unique<ref::ReferenceEngine>(threads, limits);
}
}  // namespace reduce
