// PlanGraph: the graph an optimized plan is rewritten in, with the lookups fusion passes match against.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/model.h"
#include "engine/optimized.h"

namespace reduce::opt {

// Fused nodes live in this domain; their kernels are in fused_kernels.def.
inline constexpr const char* kFusedDomain = "reduce.optimized";

// The original nodes a fused node replaced, by fused node name (kernels read their attributes).
using FusedParts = std::unordered_map<std::string, std::vector<Node>>;
using ValueTypes = std::unordered_map<std::string, ValueType>;

class PlanGraph {
 public:
  // `names`: the names taken in every graph of the plan (its bodies included), shared by their
  // PlanGraphs so that fresh names are unique across scopes (fused nodes are found by name).
  PlanGraph(Model& model, FusedParts& parts, const ValueTypes& types, const OptimizedOptions& options,
            std::unordered_set<std::string>& names);

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  Graph& graph() { return model_->graph; }
  const OptimizedOptions& options() const { return *options_; }
  bool fault(Fault fault) const { return options_->has(fault); }
  void arm_fault(Fault fault) { armed_.insert(fault); }
  const std::set<Fault>& armed_faults() const { return armed_; }

  // Rebuilds producer/consumer lookups and drops removed nodes; passes call it when they start.
  void refresh();

  size_t node_count() const { return model_->graph.nodes.size(); }
  const Node& node(size_t i) const { return model_->graph.nodes[i]; }
  bool removed(size_t i) const { return removed_[i]; }
  // The live node producing a value, or nullopt (graph input, initializer, removed producer).
  std::optional<size_t> producer(const std::string& value) const;
  // The single live node reading `value` (no other reader, not a requested output), or nullopt.
  std::optional<size_t> sole_consumer(const std::string& value) const;
  // The live nodes reading a value (each once).
  std::vector<size_t> consumers(const std::string& value) const;
  // Whether the value may vanish inside a fusion of `nodes`: not requested, read only by them.
  bool internal_to(const std::string& value, std::span<const size_t> nodes) const;
  bool is_output(const std::string& value) const { return outputs_.count(value) > 0; }
  // The initializer holding `value` (not one a graph input can override), or nullptr. The pointer
  // is invalidated by add_initializer: copy the Tensor (it shares storage) to keep it. In a body,
  // also the weights of enclosing graphs it can see (see_outer_constants).
  const Tensor* constant(const std::string& value) const;
  // For a subgraph body: the weights of the enclosing scopes, by name (names the body defines
  // shadow them). The map must outlive the PlanGraph.
  using OuterConstants = std::unordered_map<std::string, const Tensor*>;
  void see_outer_constants(const OuterConstants* outer) { outer_ = outer; }
  // The value's type (inferred, or the initializer's), if known.
  std::optional<ValueType> type(const std::string& value) const;
  // Whether the value is known to be a float (FLOAT) tensor.
  bool is_float(const std::string& value) const;
  std::optional<Shape> static_shape(const std::string& value) const;
  std::optional<size_t> rank(const std::string& value) const;

  // Replaces `nodes` by `fused`, which takes the place of the last one; `parts` are the original nodes.
  // The fused node runs in FP32 when one of `nodes` does.
  void replace(std::span<const size_t> nodes, Node fused, bool keep_parts = true);
  // The original nodes a fused node was made of (empty for other nodes); editable, for the
  // rewrites after the last pass.
  std::vector<Node>* parts_of(const std::string& fused) {
    auto it = parts_->find(fused);
    return it == parts_->end() ? nullptr : &it->second;
  }
  // Appends a node (after the last pass: precision conversions).
  void add_node(Node node);
  // Whether a plan node runs in FP32 under a reduced precision: named in `fp32=`, or made by a pass
  // from such a node (a fused kernel containing one).
  bool runs_in_fp32(const Node& node) const { return fp32_names_.count(node.name) > 0; }
  // Removes a node (its outputs must have no remaining readers).
  void remove(size_t node) { removed_[node] = true; }
  std::string fresh_name(const std::string& base);
  void add_initializer(std::string name, Tensor tensor);

 private:
  Model* model_;
  FusedParts* parts_;
  const ValueTypes* types_;
  const OptimizedOptions* options_;
  std::vector<bool> removed_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::unordered_set<std::string> outputs_;
  std::unordered_set<std::string> overridable_;
  std::unordered_map<std::string, size_t> initializers_;  // name -> index in graph().initializers  // initializers that are also graph inputs
  std::unordered_set<std::string>& names_;
  const OuterConstants* outer_ = nullptr;
  std::set<Fault> armed_;
  std::unordered_set<std::string> fp32_names_;  // plan nodes that run in FP32, by name
  size_t fresh_ = 0;
};

// A pass rewrites the plan graph and returns how many rewrites it made.
using PassFunction = Expected<int> (*)(PlanGraph& graph);

// An integer attribute for a fused node.
Attribute int_attribute(std::string name, int64_t value);
// Whether the tensor holds exactly one element (any shape) equal to `value`.
bool is_scalar_value(const Tensor& t, double value);
// The single element of a one-element float tensor, or nullopt.
std::optional<double> scalar_value(const Tensor& t);

}  // namespace reduce::opt
