// Candidate: a subgraph of an original model plus edits — what the reducer proposes, the oracle
// tests, and a bundle's journal records. One type, one canonical hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace reduce {

struct Graph;

// Node numbering is the original graph's (Graph::nodes positions), fixed for a whole reduction.
struct Candidate {
  // Kept nodes, ascending, no duplicates; never empty (Candidate::whole is the whole model). Values
  // they read that no kept node produces are "cut values": graph inputs fed with the value recorded
  // in the original model (see subgraph_boundary in core/extract.h).
  std::vector<size_t> nodes;
  // Cut values fed as constants (initializers holding the recorded value) instead of inputs. Sorted.
  std::vector<std::string> frozen;
  // Outputs of the candidate model; empty: the defaults of subgraph_boundary (kept original
  // outputs, then values no kept node reads). Non-empty lists mark intermediates.
  std::vector<std::string> outputs;
  // Reduced shapes of graph inputs (original inputs or cut values): the leading slice [0, d) of
  // each dim is fed, and expected outputs are recomputed by the reference for this candidate.
  std::map<std::string, Shape, std::less<>> input_shapes;
  // Float initializers replaced by a tensor of the same type and shape holding one value
  // (name -> value), and attributes removed, back to their defaults ((node, attribute), sorted):
  // the failure does not need the weights or the attributes. Expected outputs are recomputed.
  std::map<std::string, double, std::less<>> filled;
  std::vector<std::pair<size_t, std::string>> dropped_attributes;
  // Nodes removed from the bodies (If branches, Loop and Scan bodies, any depth) of kept nodes: ids
  // of BodyNodes(graph) (core/body_nodes.h), sorted, each under a kept node. Their values are
  // replaced as remove_body_nodes says, and expected outputs are recomputed by the reference.
  std::vector<size_t> removed_body_nodes;

  // Every node of `graph`, default outputs, no edits: the original model's own check.
  static Candidate whole(const Graph& graph);

  bool operator==(const Candidate&) const = default;
};

// Whether a candidate is well formed for a graph of `node_count` nodes: at least one node, nodes
// ascending without duplicates and in range, frozen values sorted, removed body nodes ascending
// without duplicates (and below `body_node_count` when given). The one check of every place that
// takes candidates from elsewhere (a journal, a search state): the error says what is wrong.
Status check_well_formed(const Candidate& candidate, size_t node_count, size_t body_node_count = SIZE_MAX);

// Canonical 128-bit hash of a candidate: equal candidates, equal hashes; different ones collide
// with probability about 2^-128 (the oracle's verdict cache is keyed by it alone).
std::pair<uint64_t, uint64_t> candidate_hash(const Candidate& candidate);

}  // namespace reduce

// For unordered containers of candidates (derived from candidate_hash).
template <>
struct std::hash<reduce::Candidate> {
  size_t operator()(const reduce::Candidate& c) const noexcept {
    return static_cast<size_t>(reduce::candidate_hash(c).first);
  }
};
