// Signs of an engine that does not answer as a function of the model (trust_evidence.h).
#include "session/trust_evidence.h"

namespace reduce {

namespace {

std::vector<uint64_t> bitset_of(const std::vector<size_t>& nodes) {
  std::vector<uint64_t> bits(nodes.empty() ? 0 : nodes.back() / 64 + 1);
  for (size_t n : nodes) bits[n / 64] |= uint64_t{1} << (n % 64);
  return bits;
}

// `larger` holds every node of `smaller` and more.
template <typename Set>
bool contains(const Set& larger, const Set& smaller) {
  if (larger.count <= smaller.count) return false;
  for (size_t w = 0; w < smaller.bits.size(); ++w)
    if (smaller.bits[w] & ~(w < larger.bits.size() ? larger.bits[w] : 0)) return false;
  return true;
}

}  // namespace

void TrustEvidence::observe(const Candidate& candidate, bool fails, bool flaky) {
  std::lock_guard lock(mutex_);
  flaky_ += flaky;
  if (!candidate.outputs.empty()) return;
  Candidate edits = candidate;
  edits.nodes.clear();  // the key: everything but the nodes
  std::vector<Seen>& seen = seen_[candidate_hash(edits)];
  const Seen now{bitset_of(candidate.nodes), candidate.nodes.size(), fails};
  // One contradiction per verdict that contradicts any earlier one.
  for (const Seen& s : seen) {
    const bool against = fails ? !s.fails && contains(s, now) : s.fails && contains(now, s);
    if (against) {
      ++contradictions_;
      break;
    }
  }
  seen.push_back(now);
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
