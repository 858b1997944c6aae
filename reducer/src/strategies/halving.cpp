// The precision strategy's search for one culprit when nothing ranks the nodes: bisection that
// keeps the first half of the set when it is still interesting and otherwise assumes the second.
#include "../passes/passes.h"
#include "strategies.h"

namespace reduce::detail {

namespace {

// The set shrinks by half per check: log2(n) + 1 checks for a set that one node makes
// interesting, where node-removal's bands took about 1.5 log2(n) (bench/RESULTS.md, precision
// baselines: cast_fp16_transformer, whose layerwise run fails to build). A set assumed and not
// checked is checked once it is down to one unit; when that is not interesting (the failure
// needs more than one node), the pass keeps the last set answered interesting and node-removal
// goes on from there.
class Halving : public PassState {
 public:
  Halving(const ReductionGraph& g, Candidate base, std::vector<size_t> units)
      : base_(std::make_shared<const Candidate>(std::move(base))),
        set_(std::make_shared<const std::vector<size_t>>(std::move(units))) {
    settle(g);
  }

  const std::optional<Probe>& probe() const override { return probe_; }

  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = std::make_shared<Halving>(*this);
    const auto half = static_cast<std::ptrdiff_t>(set_->size() / 2);
    if (answer.interesting) next->best_ = probe_->candidate;
    if (set_->size() > 1) {
      next->set_ = std::make_shared<const std::vector<size_t>>(
          answer.interesting ? std::vector<size_t>(set_->begin(), set_->begin() + half)
                             : std::vector<size_t>(set_->begin() + half, set_->end()));
      next->known_ = answer.interesting;
    } else {
      next->over_ = true;
    }
    next->settle(g);
    return next;
  }

  std::optional<Candidate> result() const override { return best_; }
  void conclude(Facts& facts) const override { facts.halved = true; }

 private:
  void settle(const ReductionGraph& g) {
    probe_.reset();
    if (over_) return;
    if (set_->size() > 1) {
      const auto half = static_cast<std::ptrdiff_t>(set_->size() / 2);
      if (auto c = g.with_units(*base_, std::vector<size_t>(set_->begin(), set_->begin() + half))) probe_ = Probe{std::move(*c), false, {}};
      return;
    }
    if (!known_ && set_->size() == 1)
      if (auto c = g.with_units(*base_, *set_)) probe_ = Probe{std::move(*c), false, {}};
  }

  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<size_t>> set_;  // holds the culprit (if there is one)
  bool known_ = true;                                // set_ was answered interesting
  bool over_ = false;
  std::optional<Candidate> best_;  // the last set answered interesting
  std::optional<Probe> probe_;
};

}  // namespace

PassStatePtr start_halving(const ReductionGraph& g, const Candidate& best, const Facts& facts) {
  // With a ranking, ranked-prefix does better; on a few units certify is as cheap.
  if (facts.halved || !g.options().ranking.empty()) return nullptr;
  auto units = g.units_of(best);
  if (units.size() <= 2) return nullptr;
  auto state = std::make_shared<Halving>(g, best, std::move(units));
  return state->probe() ? state : nullptr;
}

}  // namespace reduce::detail
