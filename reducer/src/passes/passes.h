// The default strategy's passes (declared from passes.def) and the removal loop they share.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "../reduction.h"

namespace reduce::detail {

#define REDUCER_PASS(name, function, help) void function(Reduction& r);
#include "passes.def"
#undef REDUCER_PASS

// A pass by its function's name (PassId::run_certify); the value is its index in reduce_passes().
enum class PassId : size_t {
#define REDUCER_PASS(name, function, help) function,
#include "passes.def"
#undef REDUCER_PASS
};

// Whether pass `id` runs in this reduction (ReduceOptions::passes).
inline bool selected(const Reduction& r, PassId id) { return r.options().passes.runs(static_cast<size_t>(id)); }

// Tries removing each group of units in order, each against the best candidate at that point
// (llvm-reduce's chunk loop: the first interesting removal in order is committed, the scan goes
// on after it). Groups already gone are skipped. Returns whether anything was committed.
bool remove_groups(Reduction& r, const std::vector<std::vector<size_t>>& groups);

// `apply(base, chosen)`: `base` with the edits numbered `chosen` applied (nullopt: not applicable).
using EditApplier = std::function<std::optional<Candidate>(const Candidate&, const std::vector<size_t>&)>;
// Tries `count` independent edits of the best candidate: all at once; else accumulated greedily
// in order (each added while the failure survives with those accepted before it). Commits the
// combination found; returns whether anything was committed.
bool commit_independent_edits(Reduction& r, size_t count, const EditApplier& apply);

}  // namespace reduce::detail
