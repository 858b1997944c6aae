// The default strategy's passes (declared from passes.def) and the state machines they share.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "../pass.h"

namespace reduce::detail {

#define REDUCER_PASS(name, start, simplifies, help) PassStatePtr start(const ReductionGraph& g, const Candidate& best, const Facts& facts);
#include "passes.def"
#undef REDUCER_PASS

// A pass by its start function's name (PassId::start_certify); the value is its index in
// reduce_passes().
enum class PassId : size_t {
#define REDUCER_PASS(name, start, simplifies, help) start,
#include "passes.def"
#undef REDUCER_PASS
};

// The passes of passes.def, in its order (reduce_model.cpp).
struct PassEntry {
  const char* name;
  PassStatePtr (*start)(const ReductionGraph&, const Candidate&, const Facts&);
  bool simplifies;
  const char* help;
};
const std::vector<PassEntry>& pass_table();


// Independent edits of a candidate, numbered 0..count()-1.
class EditList {
 public:
  virtual ~EditList() = default;
  virtual size_t count() const = 0;
  // `base` with the edits `chosen` (ascending) applied; nullopt: not applicable.
  virtual std::optional<Candidate> apply(const Candidate& base, const std::vector<size_t>& chosen) const = 0;
};

// Tries the edits of `lists[0]` on `base`: all at once; else accumulated greedily in order (each
// added while the failure survives with those accepted before it); the combination found is the
// result. When nothing is accepted, the next list is tried. nullptr when there is nothing to try.
PassStatePtr start_independent_edits(const ReductionGraph& g, const Candidate& base,
                                     std::vector<std::shared_ptr<const EditList>> lists);

// Tries removing each unit of `base` alone, each against the current candidate at that point
// (llvm-reduce's chunk loop: an interesting removal is committed and the scan goes on after it),
// sweep after sweep until one removes nothing (removal_sweeps.cpp). nullptr when there is nothing
// to try.
PassStatePtr start_removal_sweeps(const ReductionGraph& g, const Candidate& base);

}  // namespace reduce::detail
