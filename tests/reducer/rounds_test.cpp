// ReduceResult::rounds, the longest chain of checks each waiting for an earlier verdict (one its
// planning followed, or one whose slot it took), counted against -j 1, where every check waits for
// the one before, and against a lock-step test (every check held until the reducer waits for all
// it has running).
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "reducer/parallelism.h"
#include "reducer/reducer.h"
#include "synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

const CheckParallelism kParallelism(64);

using testing::CandidateView;
using testing::parse_model;
using testing::SyntheticTest;

using testing::needs;

// A reduction at `jobs` slots on a lock-step test. The round trips the counter saw bound the rounds
// from above: a test started late only because other answers came in first (a trip ends when all
// its answers are in) waited for nothing it needed, and speculation still running when the
// reduction ends delays nothing.
ReduceResult lock_step(const Model& m, const std::function<bool(const CandidateView&)>& pred, int jobs) {
  SyntheticTest inner(m, pred);
  testing::RoundTripCounter counter(inner);
  testing::TripsPerPass per_pass(counter);
  ReduceOptions opts;
  opts.jobs = jobs;
  opts.on_wait = counter.observer();
  opts.on_progress = per_pass.observer();
  auto r = reduce_model(m, counter, opts);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return {};
  per_pass.finish();
  std::printf("[ counts ] -j %d rounds per pass: %s; tests started %zu, answered %zu\n", jobs, per_pass.summary().c_str(),
              inner.calls.load(), r->checks);
  EXPECT_LE(r->rounds, counter.trips()) << "-j " << jobs;
  return std::move(r).value();
}

TEST(Rounds, AtOneJobEveryCheckWaitsForTheOneBefore) {
  Model m = parse_model(testing::chain_model_text(100));
  SyntheticTest t(m, needs({"n40"}));
  auto r = reduce_model(m, t, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cache_hits, 0u);
  EXPECT_EQ(r->rounds, r->checks);
  EXPECT_EQ(r->rounds, t.calls.load());
}

// A cached answer or a candidate refused before the engine adds no round: the chain counts runs.
TEST(Rounds, CacheHitsAndRefusedCandidatesAddNone) {
  Model m = parse_model(testing::chain_model_text(30));
  struct Cached : CandidateTest {
    SyntheticTest& inner;
    size_t runs = 0;
    explicit Cached(SyntheticTest& t) : inner(t) {}
    TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
      TestResult r = inner.test(c, cancel);
      // Every other answer as if from a cache, every third refused as invalid.
      const size_t k = inner.calls.load();
      if (k % 3 == 0) r.outcome = TestOutcome::Invalid;
      else if (k % 2 == 0) r.cache_hit = true;
      else ++runs;
      return r;
    }
  };
  SyntheticTest inner(m, needs({"n10"}));
  Cached t(inner);
  auto r = reduce_model(m, t, {});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->checks, t.runs);
  EXPECT_EQ(r->rounds, t.runs);
}

// A verdict that waited for runs the reducer did not start (a session's original check) is at
// least as deep as they are; a test that repeats its run adds each repetition.
TEST(Rounds, ExternalRoundsAndRepeatedRunsLengthenTheChain) {
  Model m = parse_model(testing::chain_model_text(30));
  struct Gated : CandidateTest {
    SyntheticTest& inner;
    explicit Gated(SyntheticTest& t) : inner(t) {}
    TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
      TestResult r = inner.test(c, cancel);
      r.after_rounds = 5;
      r.runs = 3;
      return r;
    }
  };
  SyntheticTest inner(m, needs({"n10"}));
  Gated t(inner);
  auto r = reduce_model(m, t, {});
  ASSERT_TRUE(r.ok());
  // At -j 1 the chain is every run, and the first verdict could not come before round 5.
  EXPECT_EQ(r->rounds, 5 + 3 * (r->checks - 1));
}

TEST(Rounds, SlotsShortenTheChainAndLeaveTheResult) {
  Model m = parse_model(testing::chain_model_text(200));
  const auto pred = needs({"n77", "n150"});
  SyntheticTest sequential(m, pred);
  auto one = reduce_model(m, sequential, {});
  ASSERT_TRUE(one.ok());
  const ReduceResult four = lock_step(m, pred, 4), eight = lock_step(m, pred, 8);
  EXPECT_EQ(four.best, one->best);
  EXPECT_EQ(eight.best, one->best);
  std::printf("[ counts ] chain 200 {n77, n150}: rounds %zu at -j 1, %zu at -j 4, %zu at -j 8; checks %zu / %zu / %zu\n",
              one->rounds, four.rounds, eight.rounds, one->checks, four.checks, eight.checks);
  EXPECT_LT(four.rounds, one->rounds);
  EXPECT_LE(eight.rounds, four.rounds);
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

// With k slots a bisection is a (k+1)-way split: the scheduler tests the next log2(k+1) levels of
// its decision tree at once, the 2^d - 1 positions that split the range into 2^d parts, while the
// real path still takes the binary decisions -j 1 takes (a split whose positions depended on -j
// would find another first failing position on a failure that is not monotone). Three levels at
// most: a fourth level's positions are each read with a chance of one in eight, under the
// scheduler's floor of one in four (8 more tests a round for one round in three). Output-cut over a
// chain of 256 nodes: 8 probes at -j 1; 2 levels per round at -j 3, 3 at -j 7 and -j 15.
TEST(Rounds, ABisectionTakesLog2OfTheSlotsPlusOneLevelsPerRoundUpToThree) {
  Model m = parse_model(testing::chain_model_text(256));
  const auto pred = needs({"n100"});
  ReduceOptions opts;
  opts.passes = select_passes({"output-cut"}).value();
  SyntheticTest sequential(m, pred);
  auto one = reduce_model(m, sequential, opts);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->rounds, 8u);
  for (int jobs : {3, 7, 15}) {
    SyntheticTest inner(m, pred);
    testing::RoundTripCounter counter(inner);
    ReduceOptions o = opts;
    o.jobs = jobs;
    o.on_wait = counter.observer();
    auto r = reduce_model(m, counter, o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->best, one->best) << "-j " << jobs;
    const size_t levels = jobs == 3 ? 2 : 3;
    std::printf("[ counts ] chain 256, output-cut: -j %d %zu rounds, %zu checks\n", jobs, r->rounds, r->checks);
    EXPECT_LE(r->checks, ((size_t{1} << levels) - 1) * r->rounds) << "-j " << jobs;
    // One round of slack: the scheduler may wait before a late guess fills its last slot, which
    // under load costs a round now and then (-j 3: 5 instead of 4 in 4 of 25 runs beside three busy
    // processes, never more); -j 1 takes 8.
    EXPECT_LE(r->rounds, (8 + levels - 1) / levels + 1) << "-j " << jobs;
    EXPECT_LE(r->rounds, counter.trips());
  }
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

// Answers one test at a time, once the reducer waits with every test it has running held here:
// the one with the fewest nodes first (a smaller model builds sooner), ties by node list. So the
// answers of tests started together come in one by one and in a fixed order, as runs of unequal
// length do, without timing anything: the counts are the same in every run.
class OneAnswerAtATime : public testing::HeldTests {
 public:
  explicit OneAnswerAtATime(CandidateTest& inner) : inner_(inner) {}

  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    TestResult result = inner_.test(c, cancel);
    Held self{&c};
    std::unique_lock<std::mutex> lock(mutex_);
    ++started_;
    held_.push_back(&self);
    release_if_complete();
    while (!self.released && !cancel) changed_.wait_for(lock, std::chrono::milliseconds(2));
    if (!self.released) {
      std::erase(held_, &self);
      ++cancelled_;
      return {TestOutcome::Cancelled, false, {}};
    }
    return result;
  }

  size_t started() {
    std::lock_guard<std::mutex> g(mutex_);
    return started_;
  }
  // Cancelled while held: started, never answered (at the end of the reduction too).
  size_t cancelled() {
    std::lock_guard<std::mutex> g(mutex_);
    return cancelled_;
  }

 private:
  struct Held {
    const Candidate* candidate;
    bool released = false;
  };
  // One answer per wait of the reducer, when every test it has running is held.
  void release_if_complete() override {
    if (!blocked_ || held_.empty() || held_.size() != running_) return;
    auto first = std::min_element(held_.begin(), held_.end(), [](const Held* a, const Held* b) {
      const auto& x = a->candidate->nodes;
      const auto& y = b->candidate->nodes;
      return x.size() != y.size() ? x.size() < y.size() : x < y;
    });
    (*first)->released = true;
    held_.erase(first);
    blocked_ = false;
    changed_.notify_all();
  }

  CandidateTest& inner_;
  std::vector<Held*> held_;
  size_t started_ = 0, cancelled_ = 0;
};

struct Spent {
  ReduceResult result;
  size_t started = 0, cancelled = 0;
};

Spent one_answer_at_a_time(const Model& m, const std::function<bool(const CandidateView&)>& pred, ReduceOptions opts) {
  SyntheticTest inner(m, pred);
  OneAnswerAtATime test(inner);
  opts.on_wait = test.observer();
  auto r = reduce_model(m, test, opts);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return {};
  return {std::move(r).value(), test.started(), test.cancelled()};
}

// Tests started together are all answered before the next ones are chosen: a test chosen on the
// first answers of a batch is mostly refuted by the next ones (cancelled after it started, or
// answered in vain), and waiting for them costs no round (a test's round is the answers it rests
// on, not when it starts). Output-cut over a chain of 256 nodes, answers one at a time: 3 levels of
// the bisection per round at -j 7, no test cancelled.
TEST(Rounds, TestsStartedTogetherAreAllAnsweredBeforeTheNextAreChosen) {
  Model m = parse_model(testing::chain_model_text(256));
  ReduceOptions opts;
  opts.passes = select_passes({"output-cut"}).value();
  SyntheticTest sequential(m, needs({"n100"}));
  auto one = reduce_model(m, sequential, opts);
  ASSERT_TRUE(one.ok());
  opts.jobs = 7;
  const Spent seven = one_answer_at_a_time(m, needs({"n100"}), opts);
  std::printf("[ counts ] chain 256, output-cut, one answer at a time: -j 7 %zu rounds, %zu tests started, %zu cancelled\n",
              seven.result.rounds, seven.started, seven.cancelled);
  EXPECT_EQ(seven.result.best, one->best);
  EXPECT_LE(seven.result.rounds, 3u);
  EXPECT_LE(seven.started, 3u * 7u);
}

// The whole strategy with answers one at a time: -j 8 starts at most 2.5 times the tests -j 1 runs,
// with the same result in fewer rounds.
TEST(Rounds, EightSlotsStartAtMostTwoAndAHalfTimesTheTestsOfOne) {
  Model m = parse_model(testing::chain_model_text(200));
  const auto pred = needs({"n77", "n150"});
  SyntheticTest sequential(m, pred);
  auto one = reduce_model(m, sequential, {});
  ASSERT_TRUE(one.ok());
  ReduceOptions opts;
  opts.jobs = 8;
  const Spent eight = one_answer_at_a_time(m, pred, opts);
  std::printf("[ counts ] chain 200 {n77, n150}, one answer at a time: -j 1 %zu tests; -j 8 %zu rounds, %zu started, %zu cancelled\n",
              sequential.calls.load(), eight.result.rounds, eight.started, eight.cancelled);
  EXPECT_EQ(eight.result.best, one->best);
  EXPECT_LT(eight.result.rounds, one->rounds / 2);
  EXPECT_LE(eight.started, 5 * sequential.calls.load() / 2);
}

// A candidate the other passes left 1-minimal (a fused block): every single removal fails. Once
// certify's first refusals are in, a single removal is guessed to fail, so the slots go to the
// sweep's next removals, not to the paths after a removal that does not come. A chain of 16 that
// needs every node, one answer at a time at -j 8: 3 rounds and 24 tests (before: 4 and 32; the
// first batch is planned before any answer and still bets on removals, as node-removal's first
// chunks should).
TEST(Rounds, CertifyOfANodeSetThatNeedsEveryNodeSpendsTheSlotsOnTheSweep) {
  Model m = parse_model(testing::chain_model_text(16));
  std::vector<std::string> every;
  for (int i = 0; i < 16; ++i) every.push_back("n" + std::to_string(i));
  const auto all = needs(every);
  ReduceOptions opts;
  opts.passes = select_passes({"certify"}).value();
  SyntheticTest sequential(m, all);
  auto one = reduce_model(m, sequential, opts);
  ASSERT_TRUE(one.ok());
  opts.jobs = 8;
  const Spent eight = one_answer_at_a_time(m, all, opts);
  std::printf("[ counts ] chain 16, every node needed, certify: -j 1 %zu tests; -j 8 %zu rounds, %zu started, %zu cancelled\n",
              sequential.calls.load(), eight.result.rounds, eight.started, eight.cancelled);
  EXPECT_EQ(eight.result.best, one->best);
  EXPECT_TRUE(eight.result.one_minimal);
  EXPECT_LE(eight.result.rounds, 3u);
  EXPECT_LE(eight.started, 24u);
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

// The next pass starts on the likely outcome of the previous pass's last pending verdict: its first
// candidates are tested beside that verdict, and dropped when it does not hold; only real answers
// move the reduction, so the result is -j 1's. Chain of 200, n120 reported wrong: the fully marked
// model's check names it; then the prefix ending at n120, n120 with its ancestors (first-divergence's
// last probe), n120 alone (input-cut) and with its input frozen (cut-as-constant) go side by side;
// fill-weights after. -j 1 takes 6 rounds; passes one after another would take 5 with any slots.
TEST(Rounds, TheNextPassStartsBesideThePreviousPassesLastVerdict) {
  Model m = parse_model(testing::chain_model_text(200));
  auto wrong = [](const std::string& o) { return o[0] == 'n' && std::stoi(o.substr(1)) >= 120; };
  auto pred = [&](const CandidateView& v) { return v.has("n120") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong); };
  SyntheticTest sequential(m, pred);
  sequential.failing_outputs = wrong;
  auto one = reduce_model(m, sequential, {});
  ASSERT_TRUE(one.ok());
  SyntheticTest inner(m, pred);
  inner.failing_outputs = wrong;
  OneAnswerAtATime test(inner);
  ReduceOptions opts;
  opts.jobs = 16;
  opts.on_wait = test.observer();
  auto r = reduce_model(m, test, opts);
  ASSERT_TRUE(r.ok());
  std::printf("[ counts ] chain 200, n120 reported wrong, one answer at a time: -j 1 %zu rounds; -j 16 %zu rounds, %zu started\n",
              one->rounds, r->rounds, test.started());
  EXPECT_EQ(r->best, one->best);
  EXPECT_LE(r->rounds, 3u);
}

}  // namespace
}  // namespace reduce
