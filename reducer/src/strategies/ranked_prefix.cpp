// The precision strategy's first pass: keep only the first nodes of a ranking (the nodes that add
// the most error first), as few as still make the candidate interesting.
#include <unordered_map>

#include "../passes/passes.h"
#include "strategies.h"

namespace reduce::detail {

namespace {
// Candidate k keeps the first k+1 units of the ranking that the base still holds; galloping from
// k = 0 finds the shortest interesting prefix (a prefix longer than an interesting one is assumed
// interesting too). The last one, the whole base, is known interesting and not probed.
class RankedPrefix : public SearchState<RankedPrefix, Gallop> {
 public:
  RankedPrefix(const ReductionGraph& g, Candidate base, std::vector<size_t> ranked)
      : base_(std::make_shared<const Candidate>(std::move(base))),
        ranked_(std::make_shared<const std::vector<size_t>>(std::move(ranked))) {
    search = Gallop::over(ranked_->size() - 1);
    settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph& g, size_t k) const {
    return g.with_units(*base_, std::vector<size_t>(ranked_->begin(), ranked_->begin() + static_cast<std::ptrdiff_t>(k + 1)));
  }
  std::optional<Candidate> result() const override { return last_interesting; }

 private:
  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<size_t>> ranked_;
};
}  // namespace

PassStatePtr start_ranked_prefix(const ReductionGraph& g, const Candidate& best, const Facts&) {
  const auto& ranking = g.options().ranking;
  const auto units = g.units_of(best);
  if (ranking.empty() || units.size() <= 1) return nullptr;
  // The base's units in ranking order; units the ranking does not name come last, in
  // topological order.
  std::unordered_map<size_t, size_t> rank;
  for (size_t i = 0; i < ranking.size(); ++i) rank.emplace(ranking[i], i);
  std::vector<size_t> ranked = units;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    const auto ra = rank.find(a), rb = rank.find(b);
    const size_t x = ra == rank.end() ? SIZE_MAX : ra->second, y = rb == rank.end() ? SIZE_MAX : rb->second;
    return x < y;
  });
  return std::make_shared<RankedPrefix>(g, best, std::move(ranked));
}

Strategy build_precision_strategy(const ReduceOptions&) {
  Strategy s{{{"ranked-prefix", &start_ranked_prefix},
               {"halving", &start_halving},
               {"node-removal", &start_node_removal},
               {"certify", &start_certify}}};
  s.rounds = true;
  s.certifies = true;
  s.subgraphs = false;  // the nodes kept in FP32, in a model the engine gets whole
  return s;
}

}  // namespace reduce::detail
