// Body nodes: the nodes inside the subgraph bodies (If branches, Loop and Scan bodies, at any depth)
// of a graph's top-level nodes, numbered once for a reduction, and the edit that removes some of
// them from a candidate (Candidate::removed_body_nodes), so that a control-flow node that must stay
// keeps only the body nodes its failure needs.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/extract.h"
#include "core/model.h"

namespace reduce {

struct BodyNode {
  size_t owner = 0;             // the top-level node (index into Graph::nodes) whose bodies hold it
  const Graph* body = nullptr;  // the body that holds it
  size_t position = 0;          // its index in body->nodes
  size_t end = 0;               // one past the ids of the nodes inside its own bodies: they are (id, end)
};

// The numbering: depth first, top-level nodes in order, each node's graph attributes in order
// (`g`, then `graphs`), each body's nodes in order, a node's own bodies right after it. The ids of
// one top-level node's body nodes are one range, and so are those under one body node.
class BodyNodes {
 public:
  explicit BodyNodes(const Graph& graph);
  size_t size() const { return nodes_.size(); }
  const BodyNode& operator[](size_t id) const { return nodes_[id]; }
  // The ids of the body nodes under top-level node `owner`: [first, second).
  std::pair<size_t, size_t> range_of(size_t owner) const { return ranges_[owner]; }
  const Node& node(size_t id) const { return nodes_[id].body->nodes[nodes_[id].position]; }

 private:
  void number(const Graph& body, size_t owner);
  std::vector<BodyNode> nodes_;
  std::vector<std::pair<size_t, size_t>> ranges_;
};

// Removes the body nodes `removed` (ids of BodyNodes(original), sorted) from the bodies of the nodes
// of `extracted`, a model extracted from `original` (its nodes are copies of original nodes, found
// by op type and outputs). The semantics, for any model:
// - a removed node's nested bodies go with it;
// - an output of a removed node that nothing left in its body reads (a node, a nested body, a body
//   output) needs nothing;
// - one that is still read is replaced by a value of the same element type and shape (static dims
//   equal, symbolic dims of the same name): the first such input of the removed node (followed
//   through removed nodes: a chain of shape-keeping ops is bypassed), else a body initializer of
//   that static shape holding zeros (at most 1 << 20 elements); with neither, the edit is an error
//   naming the node and the value. A value is never fed as recorded: inside a Loop body it differs
//   from iteration to iteration, so the candidate's expected outputs come from the reference;
// - a body output that no node of its body makes any more (an outer value, a body input or weight
//   took its place) is returned through an Identity node, as ONNX Runtime requires;
// - the implicit inputs of the edited nodes are recomputed, and graph inputs and initializers of
//   `extracted` that nothing reads any more are dropped.
// `types`: the value types inside each body of `original` (infer_value_types).
Status remove_body_nodes(Model& extracted, const Graph& original, const BodyNodes& numbering,
                         std::span<const size_t> removed, const BodyValueTypes& types);

// The node of `extracted` that is a copy of `original.nodes[index]` (op type and outputs are unique
// to it), or nullptr.
Node* find_extracted_node(Model& extracted, const Graph& original, size_t index);

}  // namespace reduce
