// node-removal: counter-based delta debugging over post-dominated branches, then topological bands,
// then the nodes inside kept bodies.
#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_set>

#include "core/graph_algorithms.h"
#include "removal.h"

namespace reduce::detail {

namespace {

// CDD (Zhang et al., "Toward a Better Understanding of Probabilistic Delta Debugging"): ProbDD's
// probabilities reduce to a per-round subset size that shrinks by (1 - 1/e) each round; every
// subset is tried once per round, no complements, no revisits. We start at half the list (our
// failures usually need a handful of nodes out of thousands) and stop above `last_size`.
// As a plan, one phase per element list (post-dominated branches, then single units): a round's
// chunks depend on what the previous rounds removed, so speculation can run into the next round.
class CddPlan {
 public:
  using Groups = std::vector<std::vector<size_t>>;
  struct Phase {
    std::shared_ptr<const Groups> elements;  // null: the single units of the candidate at its start
    size_t last_size = 1;
  };
  explicit CddPlan(std::vector<Phase> phases) : phases_(std::make_shared<const std::vector<Phase>>(std::move(phases))) {}

  const std::vector<size_t>* peek(const ReductionGraph& g, const Candidate& current) {
    while (phase_ < phases_->size()) {
      if (chunks_ && next_ < chunks_->size()) return &(*chunks_)[next_];
      if (!start_round(g, current)) {
        ++phase_;
        started_ = false;
      }
    }
    return nullptr;
  }
  void pop() { ++next_; }

 private:
  // Builds the next round's chunks from what `current` keeps; false when the phase is over.
  bool start_round(const ReductionGraph& g, const Candidate& current) {
    const Phase& p = (*phases_)[phase_];
    const auto left = g.all_units_of(current);
    if (!started_) {
      started_ = true;
      if (p.elements) {
        elements_ = p.elements;
      } else {
        auto singles = std::make_shared<Groups>();
        for (size_t u : g.units_of(current)) singles->push_back({u});
        elements_ = std::move(singles);
      }
      size_ = (elements_->size() + 1) / 2;
    } else {
      // Keep what is left of each element, in order; then shrink the chunk size.
      const std::unordered_set<size_t> kept(left.begin(), left.end());
      auto remaining = std::make_shared<Groups>();
      for (const auto& e : *elements_) {
        std::vector<size_t> part;
        for (size_t u : e)
          if (kept.count(u)) part.push_back(u);
        if (!part.empty()) remaining->push_back(std::move(part));
      }
      elements_ = std::move(remaining);
      if (size_ == 1) return false;
      size_ = std::min(size_ - 1, static_cast<size_t>(std::floor(static_cast<double>(size_) * (1.0 - std::exp(-1.0)))));
      size_ = std::max<size_t>(size_, 1);
    }
    chunks_.reset();
    next_ = 0;
    if (elements_->size() <= 1 || size_ < p.last_size) return false;
    auto chunks = std::make_shared<Groups>();
    for (size_t i = 0; i < elements_->size(); i += size_) {
      std::vector<size_t> chunk;
      for (size_t j = i; j < std::min(elements_->size(), i + size_); ++j)
        chunk.insert(chunk.end(), (*elements_)[j].begin(), (*elements_)[j].end());
      chunks->push_back(std::move(chunk));
    }
    chunks_ = std::move(chunks);
    return true;
  }

  // Copies share what a round does not change.
  std::shared_ptr<const std::vector<Phase>> phases_;
  size_t phase_ = 0;
  bool started_ = false;
  std::shared_ptr<const Groups> elements_;
  size_t size_ = 0;
  std::shared_ptr<const Groups> chunks_;
  size_t next_ = 0;
};

// Partitions units into branches: a branch is headed by a node that post-dominates it within the
// candidate and feeds a join (a node with several post-dominated inputs) or an output. Removing
// a branch removes a node together with everything that only serves it.
std::vector<std::vector<size_t>> branches(const ReductionGraph& g, const std::vector<size_t>& units) {
  const auto& ix = g.index();
  const size_t none = kVirtualNode;  // the virtual exit after all outputs
  std::vector<bool> kept(g.graph().nodes.size(), false);
  for (size_t u : units) kept[u] = true;
  const std::vector<size_t> ipdom = immediate_post_dominators(ix, kept);
  std::vector<size_t> children(kept.size(), 0);
  for (size_t u : units)
    if (ipdom[u] != none) ++children[ipdom[u]];
  std::vector<size_t> head(kept.size(), none);
  std::vector<size_t> heads;
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    const size_t d = ipdom[*it];
    const bool is_head = d == none || children[d] > 1;
    head[*it] = is_head ? *it : head[d];
    if (is_head) heads.push_back(*it);
  }
  std::sort(heads.begin(), heads.end(),
            [&](size_t a, size_t b) { return ix.topological_position(a) < ix.topological_position(b); });
  std::vector<size_t> slot(kept.size(), none);
  std::vector<std::vector<size_t>> out(heads.size());
  for (size_t i = 0; i < heads.size(); ++i) slot[heads[i]] = i;
  for (size_t u : units) out[slot[head[u]]].push_back(u);
  return out;
}

// Body units (ReductionGraph::body_units_of) in runs of one body each, in numbering order.
CddPlan::Groups bodies(const ReductionGraph& g, const std::vector<size_t>& body_units) {
  CddPlan::Groups out;
  const BodyNode* last = nullptr;
  for (size_t u : body_units) {
    const BodyNode& b = g.body_nodes()[u - g.graph().nodes.size()];
    if (!last || last->body != b.body || last->owner != b.owner) out.emplace_back();
    out.back().push_back(u);
    last = &b;
  }
  return out;
}

bool any_larger_than_one(const CddPlan::Groups& groups) {
  return groups.size() > 1 && std::any_of(groups.begin(), groups.end(), [](const auto& b) { return b.size() > 1; });
}

}  // namespace

// At most this many units: node-removal leaves them to certify.
constexpr size_t kFewUnits = 8;

PassStatePtr start_node_removal(const ReductionGraph& g, const Candidate& best, const Facts&) {
  auto units = g.units_of(best);
  const auto body_units = g.body_units_of(best);
  std::vector<CddPlan::Phase> phases;
  // The single-node round is the certifying sweep's when the strategy ends with one.
  const size_t last_size = g.certified() ? size_t{2} : size_t{1};
  // On a few units the certifying sweep's single removals are needed anyway and cost no more
  // than groups: on a candidate that is already 1-minimal, groups were pure extra engine runs
  // (7 on a 7-node LayerNorm). The sweep commits what goes, so nothing is lost.
  if (units.size() > 1 && !(g.certified() && units.size() <= kFewUnits)) {
    auto groups = branches(g, units);
    if (any_larger_than_one(groups)) phases.push_back({std::make_shared<const CddPlan::Groups>(std::move(groups)), 1});
    // Topological bands shrinking towards single nodes.
    phases.push_back({nullptr, last_size});
  }
  // Then the nodes inside kept bodies: whole bodies, then bands of a body's nodes in order.
  if (body_units.size() > 1 && !(g.certified() && body_units.size() <= kFewUnits)) {
    auto groups = bodies(g, body_units);
    if (any_larger_than_one(groups)) phases.push_back({std::make_shared<const CddPlan::Groups>(std::move(groups)), 1});
    auto singles = std::make_shared<CddPlan::Groups>();
    for (size_t u : body_units) singles->push_back({u});
    phases.push_back({std::move(singles), last_size});
  }
  if (phases.empty()) return nullptr;
  auto state = std::make_shared<RemovalState<CddPlan>>(g, best, CddPlan(std::move(phases)));
  if (!state->probe()) return nullptr;
  return state;
}

}  // namespace reduce::detail
