// Signs of an engine that does not answer as a function of the model (trust_evidence.h).
#include "session/trust_evidence.h"

#include <algorithm>

namespace reduce {

namespace {

bool contains(const std::vector<size_t>& larger, const std::vector<size_t>& smaller) {
  return larger.size() > smaller.size() && std::includes(larger.begin(), larger.end(), smaller.begin(), smaller.end());
}

}  // namespace

void TrustEvidence::observe(const Candidate& candidate, bool fails, bool flaky) {
  std::lock_guard lock(mutex_);
  flaky_ += flaky;
  if (!candidate.outputs.empty()) return;
  Candidate edits = candidate;
  edits.nodes.clear();
  std::vector<Seen>& seen = seen_[candidate_hash(edits)];
  // One contradiction per verdict that contradicts any earlier one.
  for (const Seen& s : seen) {
    const bool against = fails ? !s.fails && contains(s.nodes, candidate.nodes) : s.fails && contains(candidate.nodes, s.nodes);
    if (against) {
      ++contradictions_;
      break;
    }
  }
  seen.push_back({candidate.nodes, fails});
}

std::vector<std::string> TrustEvidence::reasons() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  if (contradictions_ > 0)
    out.push_back(std::to_string(contradictions_) + " check(s) of the search failed where a larger candidate passed, or " +
                  "passed where a smaller one failed");
  if (flaky_ > 0) out.push_back(std::to_string(flaky_) + " check(s) whose repeated runs (--repeat) disagreed");
  return out;
}

uint64_t TrustEvidence::contradictions() const {
  std::lock_guard lock(mutex_);
  return contradictions_;
}

}  // namespace reduce
