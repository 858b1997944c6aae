// The one place that converts between the reducer's Candidate and the oracle's CandidateSpec.
#pragma once

#include "oracle/oracle.h"
#include "reducer/candidate.h"

namespace reduce {

inline CandidateSpec to_spec(const Candidate& c) {
  return {c.nodes, c.frozen, c.outputs, c.input_shapes, c.filled, c.dropped_attributes};
}

inline Candidate to_candidate(const CandidateSpec& s) {
  return {s.nodes, s.frozen, s.outputs, s.input_shapes, s.filled, s.dropped_attributes};
}

}  // namespace reduce
