// The search shared by `reduce precision`'s two questions: which nodes to keep in FP32 on a
// reduced-precision engine, and which quantized nodes of a Q/DQ model to leave in float. Both ask
// for a 1-minimal set of nodes with which the model passes on every sample; they differ in what
// checking a set means and how nodes are ranked.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "precision/precision.h"

namespace reduce {

// The model with `set` (node indices, ascending) kept, on one sample's oracle.
using SetCheck = std::function<Verdict(Oracle& sample, const std::vector<size_t>& set, const std::atomic<bool>* cancel)>;

struct KeepSetProblem {
  std::vector<size_t> candidates;  // the nodes a set may hold, ascending
  SetCheck check;
  std::string kept = "in FP32";  // what a kept node is, for messages ("left in float")
  // The candidates, most promising first (may omit some), on the failing sample's oracle; fills
  // each node's error alone (PinnedNode::local_error) and, when traced, where error is born.
  std::function<std::vector<size_t>(Oracle& failing, std::map<size_t, double>& local_error,
                                    std::optional<ErrorOrigin>& origin)>
      rank;
};

// The model with `set` kept on every sample, the first (the one it fails on) first: the first
// verdict that fails, is invalid or was cancelled, else the first sample's (a pass).
Verdict check_set(const std::vector<Oracle*>& samples, const SetCheck& check, const std::vector<size_t>& set,
                  const std::atomic<bool>* cancel);

// Checks that the model fails as it is (moving the first sample it fails on to the front) and
// passes with every candidate kept, then searches (options.strategy) and confirms the answer
// (options.confirm). Fills `out` (kind, before, after, pinned, checks, confirmation, stopped);
// `searched` is false when the two first checks decided the outcome or a stop came first.
Status search_keep_set(std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                       std::atomic<bool>& cancelled, PrecisionOutcome& out, bool& searched);

}  // namespace reduce
