// Where error is born: the error each node adds (the node alone, on its recorded reference inputs,
// in the engine's precision) next to the error it inherits (the layerwise comparison of the whole
// model), and the nodes that explain an output's error.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oracle/layer_comparison.h"
#include "oracle/oracle.h"

namespace reduce {

// One node output, compared two ways with its recorded reference value.
struct ValueError {
  size_t node = 0;  // index into the original graph
  std::string value;
  // Accumulated: the engine on the whole model, every value requested (what `compare` showed before).
  OutputComparison accumulated;
  // Local: the node alone (a one-node model whose inputs are the recorded reference values) on the
  // engine under test. Empty when the node was not run (beyond the bound, or the run failed).
  std::optional<OutputComparison> local;
  std::string local_problem;  // why the node could not run alone (the engine's message)
  // Elements of the reference value beyond the largest finite number of the engine's precision
  // (fp16: 65504): the engine cannot hold this value, whatever it computes.
  uint64_t out_of_range = 0;
  // The first input of the node (a node output) that is out of range: the node cannot be fed its
  // reference inputs exactly, so what it does alone is inherited, not added.
  std::string unfed_input;
};

// The node adds error: it fails alone on reference inputs that the engine can hold.
bool adds_error(const ValueError& value);

// How large an error is, for ranking and charts: the ratio error / tolerance (> 1 fails), +inf
// for non-finite values where the reference is finite and for shape or type differences.
double error_score(const OutputComparison& comparison);

struct ErrorOrigin {
  std::vector<ValueError> values;  // every compared value, in topological order
  // The first value that is non-finite where the reference is finite: in the whole model
  // (accumulated), and when its node runs alone (where the non-finite value is born).
  std::optional<size_t> first_nonfinite;
  std::optional<size_t> nonfinite_born;
  Precision precision = Precision::FP32;  // of the engine under test (from its spec)
  // The values that add the most error (adds_error), largest first.
  std::vector<size_t> top_local;
  // The failing graph output with the largest accumulated error, and where its error comes from:
  // the values that add error among the nodes that feed it through failing values (walking back
  // from the output, only through values whose accumulated error fails), largest local error first.
  std::optional<size_t> worst_output;
  std::vector<size_t> sources;
  size_t sources_not_run = 0;  // nodes on those paths not run alone (the bound): sources may be missing
  size_t local_runs = 0;     // one-node models run on the engine
  size_t nodes_skipped = 0;  // nodes not run alone (the bound)
};

struct ErrorOriginOptions {
  // At most this many nodes run alone; beyond it, the nodes whose accumulated error grows the most
  // over their inputs' are run (the others' outputs are accurate, or only inherit).
  size_t max_local_runs = 2000;
  int jobs = 1;   // one-node runs in flight at once
  size_t top = 5; // length of top_local and sources
  // Called (from the workers, one at a time) as each node run alone ends: runs done, runs in all.
  std::function<void(size_t done, size_t total)> on_progress;
};

// Runs every node alone on the engine under test (through Oracle::evaluate: its cache, slots and
// statistics) and combines the local errors with `layers` (compare_layers). Deterministic
// for every `jobs`. `cancel` ends the runs early (the result is then incomplete: check it).
ErrorOrigin trace_error_origin(Oracle& oracle, const std::vector<LayerError>& layers,
                               const ErrorOriginOptions& options = {}, const std::atomic<bool>* cancel = nullptr);

}  // namespace reduce
