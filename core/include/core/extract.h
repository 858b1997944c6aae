// Subgraphs: the one boundary rule (cut values, default outputs) and extraction of standalone models.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/candidate.h"
#include "core/graph_index.h"
#include "core/model.h"

namespace reduce {

class BodyNodes;

// The value types seen from inside each subgraph body of a model (If branches, Loop and Scan
// bodies, at any depth), by body: the enclosing scopes' types with the body's own values over them.
using BodyValueTypes = std::unordered_map<const Graph*, std::unordered_map<std::string, ValueType>>;

// Types and shapes of every value of a model's main graph: declared value_info first, then what
// ONNX shape inference (with data propagation) adds. Large weights are not copied for it. With
// `bodies`, also what inference found inside subgraph bodies, keyed by the model's body graphs.
Expected<std::unordered_map<std::string, ValueType>> infer_value_types(const Model& model,
                                                                        BodyValueTypes* bodies = nullptr);

// Where a value that a subgraph reads from outside its nodes comes from.
enum class BoundarySource {
  GraphInput,   // an input of the original graph (not an initializer)
  CutValue,     // produced by a node left out of the subgraph
  Initializer,  // an initializer of the original graph (also when an input has its name)
};

// What a subgraph of a graph reads and offers (see subgraph_boundary).
struct SubgraphBoundary {
  struct Read {
    std::string name;
    BoundarySource source;
  };
  std::vector<size_t> nodes;  // the kept nodes, in the graph's topological order
  // Every value the kept nodes read (inputs, then implicit inputs of subgraphs) that no kept node
  // produces, once each, in first-use order. Omitted optional inputs ("") are not values.
  std::vector<Read> reads;
  // The subgraph's outputs: the explicit ones, or the defaults.
  std::vector<std::string> outputs;

  // Reads that become graph inputs (original graph inputs and cut values), in first-use order.
  std::vector<std::string> inputs() const;
  // The reads that are cut values, in first-use order (what freezing may embed as constants).
  std::vector<std::string> cut_values() const;
};

// A graph's initializers by name (views into the graph), as subgraph_boundary wants them.
using InitializerIndex = std::unordered_map<std::string_view, const Initializer*>;
InitializerIndex index_initializers(const Graph& graph);

// The one rule for the boundary of a subgraph made of `nodes` (indices into index.graph(), all
// in range, any order, duplicates ignored), shared by the extractor and the reducer. Outputs are
// `outputs` when not empty; else the defaults: the original outputs that kept nodes produce (in
// the graph's order), then, per kept node in topological order, its outputs that other nodes read
// but no kept node does; a node that offers no such output and no original output offers the
// outputs nothing reads instead (a dead node's outputs are all it has).
SubgraphBoundary subgraph_boundary(const GraphIndex& index, const InitializerIndex& initializers,
                                   std::span<const size_t> nodes, std::span<const std::string> outputs = {});

struct ExtractOptions {
  // Outputs of the extracted model; empty: the defaults of subgraph_boundary.
  std::vector<std::string> outputs;
  // Cut values to embed as initializers with these values instead of becoming graph inputs.
  std::map<std::string, Tensor, std::less<>> frozen;
  // Body nodes to remove (Candidate::removed_body_nodes: ids of BodyNodes, core/body_nodes.h).
  std::vector<size_t> removed_body_nodes;
};

// Extracts many subgraphs of one model: indexes the model and infers value types once.
// The model must outlive the extractor and stay unchanged.
class Extractor {
 public:
  // `run_shapes`: shapes of main-graph values in the run candidates are fed (one sample): the types
  // inside subgraph bodies are inferred with the graph inputs at theirs, and an If branch's outputs
  // take the shapes of the If's outputs where inference left dims unknown, so that body values
  // have the static shapes remove_body_nodes compares and fills (core/body_nodes.h). Main-graph
  // types are the model's, except that a dim inference leaves unknown on the model as declared but
  // finds static at the run's input shapes depends on a symbolic input dim: it gets a dim_param of
  // its own (VALUE_dK), so that a cut value stays as dynamic as the original had it.
  static Expected<Extractor> create(const Model& model, const std::map<std::string, Shape, std::less<>>& run_shapes = {});

  // A model containing exactly `nodes` (indices into the original graph, any order, duplicates
  // ignored), in topological order, with the boundary subgraph_boundary gives: the values it
  // reads become initializers when frozen or original initializers (shared, not copied), else
  // graph inputs (typed and shaped): the original inputs in their declared order, then cut values
  // in first-use order. Optional inputs named "" stay empty.
  Expected<Model> extract(std::span<const size_t> nodes, const ExtractOptions& options = {}) const;

  const Model& model() const { return *model_; }
  const GraphIndex& index() const { return index_; }
  // The known type of a value of the main graph, or nullptr.
  const ValueType* type_of(std::string_view value) const;
  // Gives a value that shape inference left untyped (one computed by an op it does not know, e.g. a
  // contrib op) the type learned elsewhere, from the value a reference run computed; a known type stays.
  void learn_type(const std::string& value, const ValueType& type);

 private:
  Extractor(const Model& model, GraphIndex index, std::unordered_map<std::string, ValueType> types,
            BodyValueTypes body_types);

  const Model* model_;
  GraphIndex index_;
  std::unordered_map<std::string, ValueType> types_;
  BodyValueTypes body_types_;
  InitializerIndex initializers_;
  std::shared_ptr<const BodyNodes> body_nodes_;
};

// The candidate edits that are not a choice of nodes, applied to the model extracted for it.

// A tensor of `like`'s float type (float, double, float16, bfloat16) and shape with every element
// `value`; other types are an error.
Expected<Tensor> filled_like(const Tensor& like, double value);
// Gives the tensor a filled weight takes (filled_like, or one shared with another candidate).
using WeightFill = std::function<Expected<Tensor>(const std::string& name, const Tensor& like, double value)>;
// Fills the candidate's `filled` initializers (through `fill`) and drops its `dropped_attributes`
// (node indices of `original`, found in `extracted` by op type and outputs, which are unique).
// An edit naming something the extracted model lacks is an error.
Status apply_candidate_edits(Model& extracted, const Graph& original, const Candidate& candidate, const WeightFill& fill);

}  // namespace reduce
