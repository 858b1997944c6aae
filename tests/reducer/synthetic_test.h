// Synthetic CandidateTests for the reducer: a predicate over the extracted candidate model decides,
// optionally after a delay; every call is checked for well-formedness and counted.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/extract.h"
#include "core/model_io.h"
#include "reducer/candidate.h"
#include "reducer/parallelism.h"
#include "reducer/reducer.h"

namespace reduce::testing {

// What a synthetic predicate sees: the kept nodes' output names and the extracted model's outputs.
struct CandidateView {
  const Candidate& candidate;
  std::set<std::string> kept;     // first output name of each kept node (node identity in text models)
  std::set<std::string> outputs;  // the candidate model's outputs
  std::set<std::string> inputs;   // the candidate model's graph inputs (cut values included)
  bool has(const std::string& node) const { return kept.count(node) > 0; }
  bool outputs_has(const std::string& value) const { return outputs.count(value) > 0; }
};

class SyntheticTest : public CandidateTest {
 public:
  SyntheticTest(const Model& model, std::function<bool(const CandidateView&)> interesting, int delay_ms = 0)
      : model_(model), extractor_(Extractor::create(model).value()), interesting_(std::move(interesting)), delay_ms_(delay_ms) {}

  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    ++calls;
    bool ok = !c.nodes.empty();
    for (size_t i = 0; i < c.nodes.size(); ++i)
      if (c.nodes[i] >= model_.graph.nodes.size() || (i > 0 && c.nodes[i] <= c.nodes[i - 1])) ok = false;
    if (!ok) {
      ++malformed;
      return {TestOutcome::Invalid, false, {}};
    }
    ExtractOptions opts;
    opts.outputs = c.outputs;
    for (const auto& f : c.frozen) opts.frozen.emplace(f, Tensor());
    auto m = extractor_.extract(c.nodes, opts);
    if (!m) {
      ++unextractable;
      return {TestOutcome::Invalid, false, {}};
    }
    for (int waited = 0; waited < delay_ms_; ++waited) {
      if (cancel) return {TestOutcome::Cancelled, false, {}};
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CandidateView view{c, {}, {}, {}};
    for (size_t n : c.nodes) view.kept.insert(model_.graph.nodes[n].outputs[0]);
    for (const auto& o : m->graph.outputs) view.outputs.insert(o.name);
    for (const auto& i : m->graph.inputs) view.inputs.insert(i.name);
    count_if_seen(*m, c);
    TestResult result{interesting_(view) ? TestOutcome::Interesting : TestOutcome::Uninteresting, false, {}};
    if (result.outcome == TestOutcome::Interesting && failing_outputs)
      for (const auto& o : m->graph.outputs)
        if (failing_outputs(o.name)) result.failing_outputs.push_back(o.name);
    return result;
  }

  // When set: which outputs of an interesting candidate the test reports as wrong values.
  std::function<bool(const std::string&)> failing_outputs;
  // repeated: tests of a model tested before (the same nodes, outputs, inputs and edits, however
  // the candidate spelled them): an engine run the verdict cache should have saved.
  std::atomic<size_t> calls{0}, malformed{0}, unextractable{0}, repeated{0};

 private:
  void count_if_seen(const Model& extracted, const Candidate& c) {
    std::string key;
    for (size_t n : c.nodes) key += std::to_string(n) + ",";
    for (const auto* list : {&extracted.graph.outputs, &extracted.graph.inputs}) {
      key += "|";
      for (const auto& v : *list) key += v.name + ",";
    }
    for (const auto& [name, value] : c.filled) key += "|" + name + "=" + std::to_string(value);
    for (const auto& [node, attr] : c.dropped_attributes) key += "|" + std::to_string(node) + "." + attr;
    for (const auto& [name, shape] : c.input_shapes) { key += "|" + name + ":"; for (int64_t d : shape) key += std::to_string(d) + "x"; }
    for (size_t id : c.removed_body_nodes) key += "|b" + std::to_string(id);
    std::lock_guard<std::mutex> lock(seen_mutex_);
    if (!seen_.insert(std::move(key)).second) ++repeated;
  }

  std::mutex seen_mutex_;
  std::set<std::string> seen_;
  const Model& model_;
  Extractor extractor_;
  std::function<bool(const CandidateView&)> interesting_;
  int delay_ms_;
};

// Counts the reducer's round trips to a slow test: every test is held until the reducer waits
// for answers and every test it has running is held here, then all held tests are answered
// together. The count is what the reduction's wall time would be in check times with unlimited
// cores (a 1-minute engine build per slot). "The reducer waits" is the reducer's own event
// (ReduceOptions::on_wait, from observer()), not guessed from quiet periods: the count does not
// depend on the machine's load.
// A test that holds the reducer's tests and answers them as the reducer's waits allow: observer()
// (for ReduceOptions::on_wait) records whether the reducer waits and how many tests it has running,
// and calls release_if_complete(), which decides, with mutex_ held, which held tests are answered.
class HeldTests : public CandidateTest {
 public:
  std::function<void(bool, size_t)> observer() {
    return [this](bool blocked, size_t running) {
      std::lock_guard<std::mutex> g(mutex_);
      blocked_ = blocked;
      running_ = running;
      release_if_complete();
    };
  }

 protected:
  virtual void release_if_complete() = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  size_t running_ = 0;
  bool blocked_ = false;
};

class RoundTripCounter : public HeldTests {
 public:
  explicit RoundTripCounter(CandidateTest& inner) : inner_(inner) {}

  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    // The answer is computed first, so that the held tests of a trip end together.
    TestResult result = inner_.test(c, cancel);
    std::unique_lock<std::mutex> lock(mutex_);
    const size_t trip = trips_;
    ++held_;
    release_if_complete();
    while (trips_ == trip && !cancel) changed_.wait_for(lock, std::chrono::milliseconds(2));
    if (trips_ == trip) --held_;  // cancelled while held: no longer part of this trip
    if (cancel) return {TestOutcome::Cancelled, false, {}};
    return result;
  }

  size_t trips() {
    std::lock_guard<std::mutex> g(mutex_);
    return trips_;
  }

 private:
  // A trip ends when the reducer waits and every test it has running is held (tests just
  // started have arrived; cancelled ones have left).
  void release_if_complete() override {
    if (!blocked_ || held_ == 0 || held_ != running_) return;
    ++trips_;
    held_ = 0;
    changed_.notify_all();
  }

  CandidateTest& inner_;
  size_t held_ = 0, trips_ = 0;
};

// Round trips per pass: the trips a RoundTripCounter counted while each pass was current.
// observer() goes into ReduceOptions::on_progress (called on the reducing thread at every
// verdict and pass change); finish() after reduce_model returns.
class TripsPerPass {
 public:
  explicit TripsPerPass(RoundTripCounter& counter) : counter_(counter) {}
  std::function<void(const ReduceProgress&)> observer() {
    return [this](const ReduceProgress& p) {
      settle();
      if (passes_.empty() || passes_.back().first != p.pass) passes_.emplace_back(p.pass, 0);
    };
  }
  void finish() { settle(); }
  // Trips of every run of `pass` (a pass runs once per round).
  size_t of(const std::string& pass) const {
    size_t n = 0;
    for (const auto& [name, trips] : passes_)
      if (name == pass) n += trips;
    return n;
  }
  // "pass trips, ..." in run order, passes without a trip left out.
  std::string summary() const {
    std::string s;
    for (const auto& [name, trips] : passes_) {
      if (!trips) continue;
      if (!s.empty()) s += ", ";
      s += name;
      s += ' ';
      s += std::to_string(trips);
    }
    return s;
  }

 private:
  void settle() {
    const size_t now = counter_.trips();
    if (!passes_.empty()) passes_.back().second += now - seen_;
    seen_ = now;
  }

  RoundTripCounter& counter_;
  std::vector<std::pair<std::string, size_t>> passes_;
  size_t seen_ = 0;
};

// A chain x -> n0 -> n1 -> ... -> n{count-1} = y of unary ops (Relu, Neg, Abs in turn).
inline std::string chain_model_text(size_t count) {
  const char* ops[] = {"Relu", "Neg", "Abs"};
  std::string s = "<ir_version: 8, opset_import: [\"\" : 17]>\nchain (float[2, 8] x) => (float[2, 8] n" +
                  std::to_string(count - 1) + ") {\n";
  for (size_t i = 0; i < count; ++i)
    s += "  n" + std::to_string(i) + " = " + ops[i % 3] + "(" + (i == 0 ? std::string("x") : "n" + std::to_string(i - 1)) + ")\n";
  return s + "}\n";
}

// Residual blocks: h{i} = Add(h{i-1}, Neg(Relu(h{i-1}))) (a{i} = Relu, b{i} = Neg, h{i} = Add),
// with a side output t{i} = Abs(a{i}) on every third block unless `side_outputs` is false.
inline std::string residual_model_text(size_t blocks, bool side_outputs = true) {
  std::string outs = "float[2, 8] h" + std::to_string(blocks - 1);
  std::string body;
  for (size_t i = 0; i < blocks; ++i) {
    const std::string in = i == 0 ? "x" : "h" + std::to_string(i - 1), k = std::to_string(i);
    body += "  a" + k + " = Relu(" + in + ")\n  b" + k + " = Neg(a" + k + ")\n  h" + k + " = Add(" + in + ", b" + k + ")\n";
    if (side_outputs && i % 3 == 1) {
      body += "  t" + k + " = Abs(a" + k + ")\n";
      outs += ", float[2, 8] t" + k;
    }
  }
  return "<ir_version: 8, opset_import: [\"\" : 17]>\nresidual (float[2, 8] x) => (" + outs + ") {\n" + body + "}\n";
}

// As the executable's main: -j checks in flight beyond the cores of this machine. One object for
// the whole test binary (an inline variable), whichever test files it links.
inline const CheckParallelism kTestParallelism(64);

// The first output names of the candidate's nodes (node identity in text models).
inline std::set<std::string> kept_names(const Model& m, const Candidate& c) {
  std::set<std::string> out;
  for (size_t n : c.nodes) out.insert(m.graph.nodes[n].outputs[0]);
  return out;
}

// The outputs of the candidate's model: its marked ones, or the defaults (subgraph_boundary).
inline std::vector<std::string> model_outputs(const Model& m, const Candidate& c) {
  const auto index = GraphIndex::build(m.graph).value();
  const auto initializers = index_initializers(m.graph);
  return subgraph_boundary(index, initializers, c.nodes, c.outputs).outputs;
}

// reduce_model on a synthetic test, which must succeed and see only well-formed candidates.
inline ReduceResult reduce_checked(const Model& m, SyntheticTest& t, ReduceOptions opts = {}) {
  auto r = reduce_model(m, t, opts);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  EXPECT_EQ(t.malformed, 0u);
  EXPECT_EQ(t.unextractable, 0u);
  return r.ok() ? std::move(r).value() : ReduceResult{};
}

// Prints the counts of a reduction into the test log (for reading, never asserted on here).
inline void log_counts(const std::string& what, const ReduceResult& r) {
  std::printf("[ counts ] %s: %zu checks (%zu cached), %zu nodes%s\n", what.c_str(), r.checks, r.cache_hits,
              r.best.nodes.size(), r.one_minimal ? ", 1-minimal" : "");
}

// A predicate: interesting when every one of `nodes` is kept.
inline auto needs(std::vector<std::string> nodes) {
  return [nodes](const CandidateView& v) {
    return std::all_of(nodes.begin(), nodes.end(), [&](const std::string& n) { return v.has(n); });
  };
}

// Two initializers and a transposing attribute to fill and drop: x -> MatMul(w) -> Transpose ->
// Add(b) -> LeakyRelu = y.
inline constexpr const char* kWeighted = R"(
<ir_version: 8, opset_import: ["" : 17]>
weighted (float[2, 2] x) => (float[2, 2] y)
<float[2, 2] w = {1.0, 2.0, 3.0, 4.0}, float[2, 2] b = {0.5, 0.5, 0.5, 0.5}>
{
  m = MatMul(x, w)
  t = Transpose<perm = [1, 0]>(m)
  a = Add(t, b)
  y = LeakyRelu<alpha = 0.2>(a)
}
)";

}  // namespace reduce::testing
