// ReductionGraph: the graph one reduction works on (index, units, types) and the candidate-building
// helpers every pass uses. Read-only for passes; it knows nothing of tests or of the search.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/body_nodes.h"
#include "core/extract.h"
#include "core/graph_index.h"
#include "core/model.h"
#include "core/quantize_pairs.h"
#include "reducer/reducer.h"

namespace reduce::detail {

class ReductionGraph {
 public:
  // `certified`: the strategy ends with a sweep of single units (certify), so a pass need not make one.
  // `keep_pairs`: candidates are subgraphs an engine builds, so they keep Q/DQ pairs whole (below),
  // and the nodes inside kept bodies are units too (body units).
  ReductionGraph(const Model& model, GraphIndex index, const ReduceOptions& options, bool certified = false,
                 bool keep_pairs = true);

  const Model& model() const { return *model_; }
  const Graph& graph() const { return model_->graph; }
  const GraphIndex& index() const { return index_; }
  const ReduceOptions& options() const { return *options_; }
  bool certified() const { return certified_; }

  // Units are what passes remove: every node but Constant nodes, which follow their readers.
  bool is_unit(size_t node) const { return unit_[node]; }
  // A candidate's units in topological order.
  std::vector<size_t> units_of(const Candidate& c) const;
  // Body units: the nodes inside the bodies of the If/Loop/Scan nodes a candidate keeps (when
  // candidates are subgraphs), numbered after the graph's nodes: unit graph().nodes.size() + id is
  // body node `id` of core/body_nodes.h. Passes that take them say so (body-removal, certify);
  // without() removes them as Candidate::removed_body_nodes.
  bool is_body_unit(size_t unit) const { return unit >= unit_.size(); }
  size_t body_unit(size_t id) const { return unit_.size() + id; }
  const BodyNodes& body_nodes() const { return bodies_; }
  // The body units a candidate keeps, in numbering order (a removed node's nested nodes are gone too).
  std::vector<size_t> body_units_of(const Candidate& c) const;
  // Every unit a candidate keeps: units_of, then body_units_of.
  std::vector<size_t> all_units_of(const Candidate& c) const;
  // units_of and body_units_of, as flags over every unit id.
  std::vector<bool> kept_units(const Candidate& c) const;

  // A candidate keeping exactly `units` plus the Constant nodes they read (less the QuantizeLinear
  // of a Q/DQ pair whose DequantizeLinear nodes are not all among `units`), with `base`'s frozen
  // values, outputs and input shapes where they still apply (explicit outputs that are no longer
  // produced are dropped; when none is left, or they are the defaults, the defaults apply (empty
  // outputs, as marking() gives); when the base freezes all its cut
  // values, new ones are frozen too). nullopt when `units` is empty.
  std::optional<Candidate> with_units(const Candidate& base, std::vector<size_t> units) const;
  // `base` without the units of `group` (body units included); nullopt when that removes nothing
  // or every top-level unit.
  std::optional<Candidate> without(const Candidate& base, const std::vector<size_t>& group) const;
  // `group` with the QuantizeLinear `base` keeps of each Q/DQ pair one of whose DequantizeLinear
  // nodes is in `group`: what removing `group` from `base` really removes (with_units leaves the
  // QuantizeLinear out), so that a removal names every unit it takes.
  std::vector<size_t> removal_of(const Candidate& base, std::vector<size_t> group) const;
  // The one validity check of candidates before they are tested: well formed (core/candidate.h) and,
  // when pairs are kept, no QuantizeLinear kept without one of its DequantizeLinear nodes or with
  // its output marked (core/quantize_pairs.h). Every candidate the passes build passes it.
  Status check(const Candidate& c) const;
  // The candidate's boundary, by the extractor's rule (core/extract.h: subgraph_boundary).
  SubgraphBoundary boundary(const Candidate& c) const {
    return subgraph_boundary(index_, initializers_, c.nodes, c.outputs);
  }
  // Its graph inputs (original inputs and cut values, first-use order), its cut values (what
  // cut-as-constant may freeze), and its outputs (explicit, or the defaults).
  std::vector<std::string> graph_inputs(const Candidate& c) const { return boundary(c).inputs(); }
  std::vector<std::string> cut_values(const Candidate& c) const { return boundary(c).cut_values(); }
  std::vector<std::string> outputs_of(const Candidate& c) const { return boundary(c).outputs; }
  using ValueSet = std::unordered_set<std::string>;
  ValueSet output_set(const Candidate& c) const {
    auto outs = outputs_of(c);
    return ValueSet(std::make_move_iterator(outs.begin()), std::make_move_iterator(outs.end()));
  }
  // `c` marking `outputs`, or with its default outputs when those are `outputs`: the same model
  // is one candidate, whichever pass came to it (one verdict, one cache entry, one engine run).
  Candidate marking(Candidate c, std::vector<std::string> outputs) const;
  // Whether `node` is the QuantizeLinear of a Q/DQ pair kept whole: its quantized output is never
  // marked as an output (an engine takes it only into its DequantizeLinear nodes).
  bool quantizes_pair(size_t node) const { return keep_pairs_ && !pairs_.dequantizers(node).empty(); }
  // Whether `c` keeps `node` (with_units may leave out a unit it was given: a pair's QuantizeLinear).
  static bool keeps(const Candidate& c, size_t node) { return std::binary_search(c.nodes.begin(), c.nodes.end(), node); }
  // Non-empty outputs of a node.
  std::vector<std::string> node_outputs(size_t node) const;
  // Units of `c` that `unit` depends on through kept nodes (itself included), in topological order.
  std::vector<size_t> ancestors_within(const Candidate& c, size_t unit) const;
  // The units of `c` (topological order) that can end a fusion an engine makes of several of its
  // nodes. A fusion only takes values nothing outside it reads (an engine cannot drop a value
  // another node or an output needs), so the fused node before the last reads into the last alone:
  // a unit ends one when a kept unit that feeds it has all its outputs read, within `c`, by it
  // alone, none of them an output of `c`.
  std::vector<size_t> fusion_ends(const Candidate& c) const;
  // The units of `c` an engine could fuse into `end`, in topological order: `end`, and every unit
  // of `c` whose outputs only units already taken read, none of them an output of `c` or of the
  // model. Readers are counted in the original graph: the model that failed first had them all,
  // and a fusion there could not take a value another node read (as for fusion_ends).
  std::vector<size_t> fusion_closure(const Candidate& c, size_t end) const;
  // The first `count` units of `c` (`units`: units_of(c)) with the outputs they give the rest of
  // `c`: the values later units read, and `c`'s own outputs among theirs. Every fusion of `c`
  // within them stays possible (no value read only inside is marked). nullopt when none crosses.
  // `outputs`: outputs_of(c) as a set, which a pass searching within `c` computes once (a walk of
  // all of `c`; the candidates made here cost in proportion to themselves, issue 71).
  std::optional<Candidate> frontier_prefix(const Candidate& c, const std::vector<size_t>& units, const ValueSet& outputs,
                                           size_t count) const {
    return frontier_window(c, units, outputs, 0, count);
  }
  // The same for units[first, count), with up to kFusionReach units before them an engine could
  // fuse into them (fusion_extension); the values they read from the units left out are cut (fed
  // their recorded values). A window starting after a prefix known to pass holds a failure born in
  // it without carrying the model's front (issue 71).
  std::optional<Candidate> frontier_window(const Candidate& c, const std::vector<size_t>& units, const ValueSet& outputs,
                                           size_t first, size_t count) const;
  // Up to `limit` units of `c` before `window` (not in it) whose outputs only `window` and each other
  // read, nearest first: fusion_closure's rule for a set, which alone would take a chain back to the
  // model's inputs (every value of a chain is read by the next node alone), so the limit. In
  // topological order.
  // kFusionReach: the patterns engines fuse are a few to a few dozen nodes (Conv+BN+ReLU 3, a
  // decomposed LayerNorm 7-9, GELU 8, attention 10-20). It adds at most 64 nodes to each of log2(n)
  // windows; a window whose cut still splits the fusion a failure needs passes, and the search
  // keeps the last candidate that failed, which held it.
  static constexpr size_t kFusionReach = 64;
  std::vector<size_t> fusion_extension(const Candidate& c, const ValueSet& outputs, const std::vector<size_t>& window,
                                       size_t limit) const;
  // The declared or inferred type of a value of the main graph, or nullptr (inferred once, on
  // first use; a failed inference is logged once through `log`).
  const ValueType* type_of(const std::string& value) const;

  // Number of top-level units of a candidate (its size as users count it).
  size_t size_of(const Candidate& c) const;
  // "12 nodes (Add 3, Mul 9), 1 frozen" for logs.
  std::string describe(const Candidate& c) const;

 private:
  const Model* model_;
  GraphIndex index_;
  const ReduceOptions* options_;
  bool certified_ = false;
  std::vector<bool> unit_;
  InitializerIndex initializers_;
  QuantizePairs pairs_;
  bool keep_pairs_ = true;
  BodyNodes bodies_;
  bool body_units_ = true;
  mutable bool types_inferred_ = false;
  mutable std::unordered_map<std::string, ValueType> types_;
};

}  // namespace reduce::detail
