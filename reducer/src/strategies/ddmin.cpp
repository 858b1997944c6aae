// ddmin: the classic delta debugging baseline (Zeller & Hildebrandt 2002), complements included.
#include <algorithm>

#include "strategies.h"

namespace reduce::detail {

namespace {
// One scan at granularity n over a base: candidates 0..n-1 keep one part; n..2n-1 keep all but
// one (skipped for n = 2: the same sets). An interesting one is committed and the next scan
// starts from it (n back to 2 after a part, n - 1 after a complement); when none is, n doubles;
// at single units the result is 1-minimal.
struct Granularity {
  Candidate base;
  std::vector<std::vector<size_t>> parts;
  size_t n = 2;
};

class Ddmin : public SearchState<Ddmin, Scan> {
 public:
  Ddmin(const ReductionGraph& g, std::shared_ptr<const Granularity> at) : at_(std::move(at)) {
    const size_t n = at_->n;
    search = Scan::over(n == 2 ? n : 2 * n);
    settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph& g, size_t i) const {
    const size_t n = at_->n;
    if (i < n) return g.with_units(at_->base, at_->parts[i]);
    std::vector<size_t> keep;
    for (size_t j = 0; j < n; ++j)
      if (j != i - n) keep.insert(keep.end(), at_->parts[j].begin(), at_->parts[j].end());
    return g.with_units(at_->base, std::move(keep));
  }
  bool commits() const { return true; }
  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    const size_t n = at_->n;
    if (answer.interesting) {
      const size_t k = *search.probe();
      return at(g, probe()->candidate, k < n ? 2 : std::max<size_t>(n - 1, 2));
    }
    auto next = SearchState::advance(g, answer);
    if (next->probe()) return next;
    const size_t units = g.size_of(at_->base);
    if (n < units) return at(g, at_->base, std::min(units, 2 * n));
    return next;  // over: 1-minimal
  }

  static PassStatePtr at(const ReductionGraph& g, const Candidate& base, size_t n) {
    const auto units = g.units_of(base);
    auto s = std::make_shared<Granularity>();
    s->base = base;
    s->n = std::min(n, units.size());
    if (units.size() < 2) s->n = 0;
    s->parts.resize(s->n);
    for (size_t i = 0; i < units.size() && s->n > 0; ++i) s->parts[i * s->n / units.size()].push_back(units[i]);
    return std::make_shared<Ddmin>(g, std::move(s));
  }

 private:
  std::shared_ptr<const Granularity> at_;
};
}  // namespace

PassStatePtr start_ddmin(const ReductionGraph& g, const Candidate& best, const Facts&) {
  if (g.size_of(best) < 2) return nullptr;
  return Ddmin::at(g, best, 2);
}

Strategy build_ddmin(const ReduceOptions&) {
  Strategy s{{{"ddmin", &start_ddmin}}};
  s.certifies = true;
  return s;
}

}  // namespace reduce::detail
