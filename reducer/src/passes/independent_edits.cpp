// Independent edits of the best candidate (freeze a value, fill a weight, drop an attribute): all
// at once, else accumulated greedily in order.
#include "passes.h"

namespace reduce::detail {

namespace {

// All edits of a list together, else each added in order while the failure survives with those
// accepted before it. Lists are tried in turn until one accepts something.
class Accumulation : public PassState {
 public:
  Accumulation(const ReductionGraph& g, Candidate base, std::vector<std::shared_ptr<const EditList>> lists)
      : base_(std::make_shared<const Candidate>(std::move(base))),
        lists_(std::make_shared<const std::vector<std::shared_ptr<const EditList>>>(std::move(lists))) {
    settle(g);
  }

  const std::optional<Probe>& probe() const override { return probe_; }

  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto t = std::make_shared<Accumulation>(*this);
    const size_t count = list().count();
    if (together_) {
      t->together_ = false;
      if (answer.interesting) {
        t->accepted_ = all();
        t->next_ = count;
      }
    } else {
      if (answer.interesting) t->accepted_ = with_next();
      ++t->next_;
    }
    t->settle(g);
    return t;
  }

  std::optional<Candidate> result() const override { return result_; }
  std::optional<Candidate> result_so_far() const override {
    if (result_ || accepted_.empty()) return result_;
    return list().apply(*base_, accepted_);
  }

 private:
  const EditList& list() const { return *(*lists_)[list_]; }
  std::vector<size_t> all() const {
    std::vector<size_t> out(list().count());
    for (size_t k = 0; k < out.size(); ++k) out[k] = k;
    return out;
  }
  std::vector<size_t> with_next() const {
    auto set = accepted_;
    set.push_back(next_);  // ascending: edits are tried in order
    return set;
  }
  // The edit set to try now, or nullopt when this list is done.
  std::optional<std::vector<size_t>> wanted() const {
    const size_t count = list().count();
    if (together_) return all();
    // The last edit would complete the set already tried together (and refused).
    if (next_ >= count || (next_ + 1 == count && accepted_.size() + 1 == count)) return std::nullopt;
    return with_next();
  }
  void settle(const ReductionGraph&) {
    probe_.reset();
    while (list_ < lists_->size()) {
      if (list().count() > 0)
        while (const auto set = wanted()) {
          if (auto c = list().apply(*base_, *set)) {
            probe_ = Probe{std::move(*c), false, {}};
            return;
          }
          // Not applicable: as if refused.
          if (together_) together_ = false;
          else ++next_;
        }
      if (!accepted_.empty()) {
        result_ = list().apply(*base_, accepted_);
        return;
      }
      ++list_;
      together_ = true;
      next_ = 0;
    }
  }

  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<std::shared_ptr<const EditList>>> lists_;
  size_t list_ = 0;
  bool together_ = true;
  size_t next_ = 0;               // the edit tried next
  std::vector<size_t> accepted_;  // edits accepted so far
  std::optional<Probe> probe_;
  std::optional<Candidate> result_;
};

}  // namespace

PassStatePtr start_independent_edits(const ReductionGraph& g, const Candidate& base,
                                     std::vector<std::shared_ptr<const EditList>> lists) {
  auto state = std::make_shared<Accumulation>(g, base, std::move(lists));
  if (!state->probe() && !state->result()) return nullptr;
  return state;
}

}  // namespace reduce::detail
