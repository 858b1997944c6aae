// Subgraph extraction: a standalone, valid model made of a chosen set of an original model's nodes.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/graph_index.h"
#include "core/model.h"

namespace reduce {

// Types and shapes of every value of a model's main graph: declared value_info first, then what
// ONNX shape inference (with data propagation) adds. Large weights are not copied for it.
Expected<std::unordered_map<std::string, ValueType>> infer_value_types(const Model& model);

struct ExtractOptions {
  // Outputs of the extracted model. Empty: every value of a kept node that no kept node reads
  // (values that nothing read in the original either are left out, unless a node has nothing
  // else to offer) plus kept original outputs; original outputs come first, in their order.
  std::vector<std::string> outputs;
  // Cut values to embed as initializers with these values instead of becoming graph inputs.
  std::map<std::string, Tensor, std::less<>> frozen;
};

// Extracts many subgraphs of one model: indexes the model and infers value types once.
// The model must outlive the extractor and stay unchanged.
class Extractor {
 public:
  static Expected<Extractor> create(const Model& model);

  // A model containing exactly `nodes` (indices into the original graph, any order, duplicates
  // ignored), in topological order. Every value the kept nodes read that no kept node produces
  // becomes a graph input (typed and shaped) unless it is an original initializer (shared, not
  // copied) or frozen. Optional inputs named "" stay empty.
  Expected<Model> extract(std::span<const size_t> nodes, const ExtractOptions& options = {}) const;

  const Model& model() const { return *model_; }
  const GraphIndex& index() const { return index_; }
  // The known type of a value of the main graph, or nullptr.
  const ValueType* type_of(std::string_view value) const;

 private:
  Extractor(const Model& model, GraphIndex index, std::unordered_map<std::string, ValueType> types)
      : model_(&model), index_(std::move(index)), types_(std::move(types)) {}

  const Model* model_;
  GraphIndex index_;
  std::unordered_map<std::string, ValueType> types_;
  std::unordered_map<std::string_view, const Initializer*> initializers_;
};

}  // namespace reduce
