// unused-outputs: keep a single output of the candidate model when one is enough.
#include "passes.h"

namespace reduce::detail {

namespace {
class UnusedOutputs : public SearchState<UnusedOutputs, Scan> {
 public:
  UnusedOutputs(const ReductionGraph& g, Candidate base, std::vector<std::string> outputs)
      : base_(std::make_shared<const Candidate>(std::move(base))),
        outputs_(std::make_shared<const std::vector<std::string>>(std::move(outputs))) {
    search = Scan::over(outputs_->size());
    settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph& g, size_t i) const { return g.marking(*base_, {(*outputs_)[i]}); }
  bool commits() const { return true; }

 private:
  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<std::string>> outputs_;
};
}  // namespace

PassStatePtr start_unused_outputs(const ReductionGraph& g, const Candidate& best, const Facts&) {
  auto outputs = g.outputs_of(best);
  if (outputs.size() <= 1) return nullptr;
  return std::make_shared<UnusedOutputs>(g, best, std::move(outputs));
}

}  // namespace reduce::detail
