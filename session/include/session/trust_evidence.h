// Signs that the engine under test does not answer as a function of the model: what a reduction
// spends its extra trust runs on (more confirmation runs, the probe models again) instead of
// spending them on every reduction (issue 69). Fed every verdict of the search.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/candidate.h"

namespace reduce {

class TrustEvidence {
 public:
  // A verdict of the search: `fails` when it showed the failure to keep, else it passed (other
  // outcomes say nothing here); `flaky` when its repeated runs (--repeat) disagreed. Thread-safe.
  void observe(const Candidate& candidate, bool fails, bool flaky);
  // One line per kind of sign seen ("" none): a candidate that failed while a larger one with the
  // same edits passed (a deterministic engine fails on every model that contains what fails; an
  // output that hides the error downstream is the honest exception), and checks whose runs disagreed.
  std::vector<std::string> reasons() const;
  uint64_t contradictions() const;

 private:
  // A candidate's nodes as a bitset (one bit per node of the model: a few KB on a 200 000-node
  // model, where the node list would be 8 bytes a node for every check).
  struct Seen {
    std::vector<uint64_t> bits;
    size_t count = 0;
    bool fails = false;
  };
  mutable std::mutex mutex_;
  // Verdicts by the candidate's edits other than its nodes (frozen values, shapes, weights,
  // attributes, bodies): only candidates that differ in their nodes alone are compared. Candidates
  // with marked outputs are left out (marking a value changes what an engine fuses).
  std::map<std::pair<uint64_t, uint64_t>, std::vector<Seen>> seen_;
  uint64_t contradictions_ = 0;
  uint64_t flaky_ = 0;
};

}  // namespace reduce
