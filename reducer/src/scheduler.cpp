// The scheduler: the real path of decisions, and best-first speculation over guessed paths.
#include "scheduler.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

namespace reduce::detail {

Scheduler::Scheduler(const ReductionGraph& g, CandidateTest& test, const ReduceOptions& options, Strategy strategy,
                     Candidate start)
    : g_(g),
      options_(options),
      strategy_(std::move(strategy)),
      runner_(test, g, options.jobs, options.stop,
              [this](const Candidate& c, const Verdict& v, bool cache_hit) {
                if (options_.verbose)
                  log(std::string("check: ") + to_string(v.outcome) + (cache_hit ? " (cached)" : "") + " [round " +
                      std::to_string(v.round) + "] " + g_.describe(c));
                report_progress();
              },
              options.on_wait),
      start_time_(std::chrono::steady_clock::now()) {
  real_.best = std::make_shared<const Candidate>(std::move(start));
  real_.simplify_runs = options.simplify_runs_spent;
  start_size_ = g_.size_of(*real_.best);
}

double Scheduler::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
}

void Scheduler::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void Scheduler::report_progress() const {
  if (!options_.on_progress) return;
  ReduceProgress p;
  p.size = g_.size_of(*real_.best);
  p.start_size = start_size_;
  p.checks = counts().checks;
  p.cache_hits = counts().cache_hits;
  p.elapsed = elapsed();
  p.rate = p.elapsed > 0 ? static_cast<double>(p.checks) / p.elapsed : 0;
  p.pass = pass_name_;
  options_.on_progress(p);
}

void Scheduler::begin_pass(size_t pass) {
  pass_name_ = strategy_.passes[pass].name;
  auto it = std::find_if(stats_.begin(), stats_.end(), [&](const PassStats& s) { return s.name == pass_name_; });
  if (it == stats_.end()) it = stats_.insert(stats_.end(), PassStats{pass_name_, 0, 0, 0});
  stat_ = static_cast<size_t>(it - stats_.begin());
  pass_started_ = std::chrono::steady_clock::now();
  pass_checks_ = counts().checks;
  pass_commits_ = commits_;
  if (options_.on_certify && pass_name_ == "certify") options_.on_certify(*real_.best, rounds());
  // Removal answers are read against the candidate the pass starts from (with several jobs).
  if (runner_.jobs() > 1) {
    predictor_ = RemovalPredictor();
    predictor_.learn_from_history(g_, runner_.verdicts(), *real_.best);
  }
  report_progress();
}

void Scheduler::end_pass() {
  PassStats& s = stats_[stat_];
  s.checks += counts().checks - pass_checks_;
  s.successes += commits_ - pass_commits_;
  s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_started_).count();
}

void Scheduler::committed(size_t before) {
  ++commits_;
  if (options_.on_improvement) options_.on_improvement(*real_.best, real_.simplify_runs);
  const size_t after = g_.size_of(*real_.best);
  if (after != before)
    log(pass_name_ + ": " + std::to_string(before) + " -> " + std::to_string(after) + " nodes");
  else
    log(pass_name_ + ": simplified (" + std::to_string(after) + " nodes)");
  report_progress();
}

namespace {
// FNV-1a over the node indices and removed body nodes: the identity of a node set in
// Facts::ended_on (0 is "never").
uint64_t node_set_hash(const Candidate& c) {
  uint64_t h = 1469598103934665603ull;
  for (size_t n : c.nodes) {
    h ^= static_cast<uint64_t>(n) + 1;
    h *= 1099511628211ull;
  }
  for (size_t id : c.removed_body_nodes) {
    h ^= ~static_cast<uint64_t>(id);
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}
bool is_certify(const Pass& pass) { return std::string_view(pass.name) == "certify"; }
}  // namespace

// Certify's sweeps go on until one removes nothing (passes/removal_sweeps.cpp): what it removed
// leaves a 1-minimal candidate, and a round of the other passes after each of its removals (a
// failure that needs every input's reader lets certify take one or two nodes per sweep) cost more
// engine runs than the sweeps. Any other pass's commit opens another round.
bool Scheduler::opens_a_round(const Path& path) const { return !is_certify(strategy_.passes[path.pass]); }

bool Scheduler::ended_on_these_nodes(const Path& path) const {
  // Certify always runs: the 1-minimal claim is about the whole final candidate (its repeated
  // probes are answered from the cache, without the engine).
  if (is_certify(strategy_.passes[path.pass]) || path.pass >= path.facts.ended_on.size()) return false;
  return path.facts.ended_on[path.pass] == node_set_hash(*path.best);
}

void Scheduler::record_end(Path& path) const {
  if (path.facts.ended_on.size() < strategy_.passes.size()) path.facts.ended_on.resize(strategy_.passes.size(), 0);
  path.facts.ended_on[path.pass] = node_set_hash(*path.best);
}

bool Scheduler::out_of_simplify_runs(const Path& path) const {
  return options_.simplify_runs && strategy_.passes[path.pass].simplifies && path.simplify_runs >= *options_.simplify_runs;
}

PassStatePtr Scheduler::start(const Path& path) {
  // A later round gives a pass another go only on another node set: on the same one, what
  // changed since it ended are simplifications, which rarely open a new removal or edit, and
  // re-trying cost one engine run each (bench/RESULTS.md, "Engine runs per reduction").
  if (path.round > 1 && ended_on_these_nodes(path)) return nullptr;
  StartKey key{path.pass, *path.best, path.facts.start_key(*path.best)};
  if (auto it = starts_.find(key); it != starts_.end()) return it->second;
  auto state = strategy_.passes[path.pass].start(g_, *path.best, path.facts);
  if (starts_.size() >= 256) starts_.clear();
  starts_.emplace(std::move(key), state);
  return state;
}

const Probe* Scheduler::settle(Path& path, bool real) {
  while (true) {
    if (!path.state) {
      if (path.pass == strategy_.passes.size()) {
        if (!strategy_.rounds || !path.round_changed) return nullptr;
        if (real)
          log("round " + std::to_string(path.round) + " done: " + std::to_string(g_.size_of(*path.best)) + " nodes, " +
              std::to_string(counts().checks) + " checks");
        ++path.round;
        path.pass = 0;
        path.round_changed = false;
      }
      if (real) begin_pass(path.pass);
      path.state = start(path);
      if (path.state && out_of_simplify_runs(path)) {
        if (real) simplify_budget_reached_ = true;
        path.state.reset();
      }
      if (!path.state) {
        if (real) end_pass();
        record_end(path);
        ++path.pass;
        continue;
      }
    }
    const bool stopped = path.state->probe() && out_of_simplify_runs(path);
    if (stopped && real) simplify_budget_reached_ = true;
    if (!stopped)
      if (const auto& probe = path.state->probe()) return &*probe;
    // The pass is over (or out of simplification runs: what its search accepted so far stays).
    if (auto result = stopped ? path.state->result_so_far() : path.state->result(); result && *result != *path.best) {
      const size_t before = g_.size_of(*path.best);
      path.best = std::make_shared<const Candidate>(std::move(*result));
      path.round_changed |= opens_a_round(path);
      if (real) committed(before);
    }
    path.state->conclude(path.facts);
    path.state.reset();
    if (real) end_pass();
    record_end(path);
    ++path.pass;
  }
}

void Scheduler::advance(Path& path, const Probe& probe, const Answer& answer, bool real) {
  // Counted first: a commit's journal record says the runs spent with it (--resume).
  if (answer.ran && strategy_.passes[path.pass].simplifies) ++path.simplify_runs;
  if (answer.interesting && probe.commit && probe.candidate != *path.best) {
    const size_t before = g_.size_of(*path.best);
    path.best = std::make_shared<const Candidate>(probe.candidate);
    path.round_changed |= opens_a_round(path);
    if (real) committed(before);
  }
  path.state = path.state->advance(g_, answer);
}

double Scheduler::prior(const Path& path, const Probe& probe) const {
  if (!probe.removed.empty()) return predictor_.probability_interesting(g_, *path.best, probe.removed);
  return probe.likely;
}

namespace {
// A guessed path's probe is tested only when the reduction reads its answer with a chance of at
// least one in four: three levels of an even bisection per round (7 of 8 slots), not a fourth
// level's candidates, each read with a chance of one in eight. On the 16 rows of issue 69's table
// at -j 8 that left rounds at 71 (68) and engine runs at 498 (573); a floor of 0.3 gave 96 rounds
// (bench/RESULTS.md, "Speculation with a floor").
constexpr double kSpeculationFloor = 0.25;
}  // namespace

std::vector<Wanted> Scheduler::plan() {
  struct Node {
    double probability;
    size_t order;
    Path path;
  };
  auto less_likely = [](const Node& a, const Node& b) {
    return a.probability != b.probability ? a.probability < b.probability : a.order > b.order;
  };
  std::priority_queue<Node, std::vector<Node>, decltype(less_likely)> frontier(less_likely);
  size_t order = 0;
  const size_t slots = static_cast<size_t>(runner_.jobs());
  std::vector<Wanted> wanted;
  std::unordered_set<Candidate> listed;
  // Expands `node`: follows known answers to the next unanswered probe, lists it, and returns
  // its two children (yes, no); nullopt when the strategy ends on this path.
  bool asked_removes_nothing = true;  // of the last expansion: a guess without a predictor
  auto expand = [&](Node node) -> std::optional<std::pair<Node, Node>> {
    const Probe* probe = nullptr;
    while ((probe = settle(node.path, false))) {
      const Verdict* v = runner_.known(probe->candidate);
      if (!v) break;
      node.path.rests_on = std::max(node.path.rests_on, v->round);
      advance(node.path, *probe, answer_of(*v), false);
    }
    if (!probe) return std::nullopt;
    // Its descendants are no likelier: the whole subtree stays unplanned.
    if (node.probability < kSpeculationFloor && !wanted.empty()) return std::nullopt;
    if (listed.insert(probe->candidate).second) {
      wanted.push_back({probe->candidate, node.path.rests_on, node.path.pass});
      if (!probe->removed.empty()) planned_removals_.emplace(probe->candidate, probe->removed);
    }
    const double p = prior(node.path, *probe);
    asked_removes_nothing = probe->removed.empty();
    const Probe asked = *probe;  // `probe` lives in the state the paths are about to leave
    Node yes{node.probability * p, order++, node.path};
    advance(yes.path, asked, Answer{true, nullptr}, false);
    Node no{node.probability * (1 - p), order++, std::move(node.path)};
    advance(no.path, asked, Answer{false, nullptr}, false);
    return std::make_pair(std::move(yes), std::move(no));
  };
  // Half the slots follow the single most likely path while one side of each guess is likelier
  // (its answers come in whatever happens off it, and teach the predictor); the rest go
  // best-first to the likeliest alternatives.
  // Twice the slots are listed: the second half keeps tests already running from being
  // cancelled for a slightly more likely one.
  std::optional<Node> greedy = Node{1.0, order++, real_};
  size_t expanded = 0;
  for (; greedy && wanted.size() < (slots + 1) / 2; ++expanded) {
    auto children = expand(std::move(*greedy));
    greedy.reset();
    if (!children) break;
    auto& [yes, no] = *children;
    if (yes.probability == no.probability && asked_removes_nothing) {
      // An even guess without a predictor (a bisection): the tree is best covered level by level.
      frontier.push(std::move(yes));
      frontier.push(std::move(no));
      break;
    }
    const bool likely_yes = yes.probability > no.probability;
    frontier.push(std::move(likely_yes ? no : yes));
    greedy = std::move(likely_yes ? yes : no);
  }
  if (greedy) frontier.push(std::move(*greedy));
  for (; !frontier.empty() && frontier.top().probability >= kSpeculationFloor && wanted.size() < 2 * slots &&
         expanded < 64 * slots;
       ++expanded) {
    Node node = frontier.top();
    frontier.pop();
    if (auto children = expand(std::move(node))) {
      frontier.push(std::move(children->first));
      frontier.push(std::move(children->second));
    }
  }
  return wanted;
}

const Verdict* Scheduler::obtain(const Probe& probe) {
  // Looked at and planned again only once a test ended: the plan rests on the verdicts and the
  // slots, and the wait wakes every 50 ms to see the stop flag (planning then copied and hashed
  // the candidates 20 times a second while a long engine run went on: at 200 000 nodes a third of
  // the time outside the engine).
  std::optional<size_t> seen;  // runner_.ended() when last looked
  while (!runner_.stopped()) {
    if (seen != runner_.ended()) {
      seen = runner_.ended();
      if (const Verdict* v = runner_.known(probe.candidate)) {
        runner_.use(probe.candidate);
        return v;
      }
      runner_.schedule(runner_.jobs() == 1 ? std::vector<Wanted>{{probe.candidate, real_.rests_on, real_.pass}} : plan());
    }
    for (const auto& c : runner_.wait()) {
      auto it = planned_removals_.find(c);
      if (it == planned_removals_.end()) continue;
      predictor_.record(it->second, runner_.verdicts().at(c).interesting());
      planned_removals_.erase(it);
    }
  }
  return nullptr;
}

Status Scheduler::run() {
  while (!runner_.stopped()) {
    const Probe* probe = settle(real_, true);
    if (!probe) {
      finished_ = true;
      break;
    }
    const Probe asked = *probe;
    const Verdict* v = obtain(asked);
    if (!v) break;
    real_.rests_on = std::max(real_.rests_on, v->round);
    advance(real_, asked, answer_of(*v), true);
  }
  if (!finished_ && real_.state) end_pass();
  runner_.drain();
  if (options_.verbose) log_spending();
  if (runner_.failure()) return make_error("internal error: a candidate test threw: " + *runner_.failure());
  return {};
}

void Scheduler::log_spending() const {
  // By the pass of the path that planned them: answers the real path read, answers it never read
  // (speculation down a branch not taken), tests cancelled after they started (at the end too).
  const size_t n = strategy_.passes.size();
  std::vector<size_t> used(n, 0), unused(n, 0);
  for (const auto& [c, v] : runner_.verdicts())
    if (v.ran && v.pass < n) ++(v.used ? used : unused)[v.pass];
  const auto& cancelled = runner_.cancelled_by_pass();
  std::string line = "tests by the pass that planned them (used / answered, not used / cancelled):";
  for (size_t p = 0; p < n; ++p) {
    const size_t c = p < cancelled.size() ? cancelled[p] : 0;
    if (used[p] + unused[p] + c == 0) continue;
    line += std::string(" ") + strategy_.passes[p].name + " " + std::to_string(used[p]) + "/" + std::to_string(unused[p]) +
            "/" + std::to_string(c) + ";";
  }
  log(line);
}

}  // namespace reduce::detail
