// Candidate and CandidateTest: what the reducer proposes, and the only way it learns whether a
// proposal still shows the failure (the oracle implements CandidateTest; the reducer knows no engine).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace reduce {

// A subgraph of the original model plus transformations. Node numbering is the original graph's
// (Graph::nodes positions), fixed for the whole reduction.
struct Candidate {
  // Kept nodes, ascending, no duplicates. Values they read that no kept node produces are "cut
  // values": they become graph inputs fed with the value recorded in the original model.
  std::vector<size_t> nodes;
  // Cut values fed as constants (initializers holding the recorded value) instead of inputs. Sorted.
  std::vector<std::string> frozen;
  // Outputs of the candidate model; empty: the values of kept nodes that no kept node reads, plus
  // kept original outputs (see ExtractOptions::outputs). Non-empty lists mark intermediates.
  std::vector<std::string> outputs;
  // Reduced shapes of graph inputs (original inputs or cut values): the leading slice [0, d) of
  // each dim is fed, and expected outputs are recomputed by the reference for this candidate.
  std::map<std::string, Shape, std::less<>> input_shapes;
  // Float initializers replaced by a tensor of the same type and shape holding one value
  // (name -> value), and attributes removed, back to their defaults ((node, attribute), sorted):
  // the failure does not need the weights or the attributes. Expected outputs are recomputed.
  std::map<std::string, double, std::less<>> filled;
  std::vector<std::pair<size_t, std::string>> dropped_attributes;

  bool operator==(const Candidate&) const = default;
};

// How one test of a candidate ended.
enum class TestOutcome {
  Interesting,    // shows the same failure as the original: the reducer may commit it
  Uninteresting,  // passes (no failure)
  Slipped,        // fails, but differently (another error, another kind, much smaller error)
  Invalid,        // not a runnable model (failed the structural/ONNX checks, or the reference failed)
  Cancelled,      // the reducer cancelled the test before it ended
};

const char* to_string(TestOutcome outcome);

struct TestResult {
  TestOutcome outcome = TestOutcome::Uninteresting;
  bool cache_hit = false;  // answered from the verdict cache, without running an engine
  // When the test compares output values: the candidate's outputs found wrong, in output order.
  // first-divergence uses them to go straight to the first failing value instead of bisecting.
  std::vector<std::string> failing_outputs;
};

// Decides whether a candidate is interesting. Called concurrently from up to `jobs` threads;
// implementations must be thread-safe and should return promptly (Cancelled) once `cancel` is set.
class CandidateTest {
 public:
  virtual ~CandidateTest() = default;
  virtual TestResult test(const Candidate& candidate, const std::atomic<bool>& cancel) = 0;
};

}  // namespace reduce
