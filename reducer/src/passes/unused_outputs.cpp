// unused-outputs: keep a single output of the candidate model when one is enough.
#include "passes.h"

namespace reduce::detail {

void run_unused_outputs(Reduction& r) {
  const Candidate base = r.best();
  const auto outputs = r.outputs_of(base);
  if (outputs.size() <= 1) return;
  auto make = [&](size_t i) -> std::optional<Candidate> {
    Candidate c = base;
    c.outputs = {outputs[i]};
    return c;
  };
  if (const auto k = r.first_interesting(outputs.size(), make)) r.commit(*make(*k));
}

}  // namespace reduce::detail
