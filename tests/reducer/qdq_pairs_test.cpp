// Reductions keep Q/DQ pairs whole: no tested candidate keeps a QuantizeLinear without the
// DequantizeLinear nodes it feeds (TensorRT refuses it alone), unless the original model does.
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "core/quantize_pairs.h"
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

// qa feeds two DequantizeLinear nodes (a pair); lone is a QuantizeLinear whose output is a graph
// output (lone in the model itself); qr feeds a DequantizeLinear and a Relu (not a pair either).
const char* kQdq = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4] X) => (float[1,4] Y, int8[1,4] L, float[1,4] R)
<float s = {0.1}, int8 z = {0}>
{
  a = Relu(X)
  qa = QuantizeLinear(a, s, z)
  da = DequantizeLinear(qa, s, z)
  db = DequantizeLinear(qa, s, z)
  m = Mul(da, db)
  t = Tanh(m)
  Y = Add(t, X)
  L = QuantizeLinear(t, s, z)
  qr = QuantizeLinear(X, s, z)
  dr = DequantizeLinear(qr, s, z)
  rr = Cast <to = 1> (qr)
  R = Add(dr, rr)
}
)";

size_t node_named(const Model& m, const std::string& first_output) {
  for (size_t i = 0; i < m.graph.nodes.size(); ++i)
    if (m.graph.nodes[i].outputs[0] == first_output) return i;
  ADD_FAILURE() << "no node writes " << first_output;
  return 0;
}

std::vector<size_t> nodes_named(const Model& m, std::vector<std::string> names) {
  std::vector<size_t> out;
  for (const auto& n : names) out.push_back(node_named(m, n));
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> kept_names(const Model& m, const Candidate& c) {
  std::set<std::string> out;
  for (size_t n : c.nodes) out.insert(m.graph.nodes[n].outputs[0]);
  return out;
}

// Counts the candidates that reach the test ("engine runs") and those among them that break a pair.
class PairWatch : public CandidateTest {
 public:
  PairWatch(const Model& m, CandidateTest& inner) : index_(GraphIndex::build(m.graph).value()), pairs_(index_), inner_(inner) {}
  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++runs;
      if (!pairs_.check(c.nodes, c.outputs).ok()) ++broken;
    }
    return inner_.test(c, cancel);
  }
  size_t runs = 0, broken = 0;

 private:
  GraphIndex index_;
  QuantizePairs pairs_;
  CandidateTest& inner_;
  std::mutex mutex_;
};

// Reduces with a synthetic predicate, checking that every test was an engine run of a well-formed
// candidate and, for the default strategy, that none broke a pair.
ReduceResult reduce_watched(const Model& m, std::function<bool(const CandidateView&)> pred, int jobs,
                            const std::string& strategy = "default") {
  SyntheticTest t(m, std::move(pred));
  PairWatch watch(m, t);
  ReduceOptions opts;
  opts.jobs = jobs;
  opts.strategy = strategy;
  auto r = reduce_model(m, watch, opts);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  EXPECT_EQ(t.malformed, 0u);
  EXPECT_EQ(t.unextractable, 0u);
  if (strategy == "default") {
    EXPECT_EQ(watch.broken, 0u) << "candidates that broke a pair reached the test";
  }
  // With one job every run is a counted check; with more, speculative runs may be cancelled or
  // dropped at the end, uncounted, so only the pair check above holds for them.
  if (r.ok() && jobs == 1) {
    EXPECT_EQ(watch.runs, r->checks - r->cache_hits);
  }
  return r.ok() ? std::move(r).value() : ReduceResult{};
}

TEST(QuantizePairs, AQuantizeKeptWithoutOneOfItsDequantizersBreaksThePair) {
  Model m = parse_model(kQdq);
  const GraphIndex index = GraphIndex::build(m.graph).value();
  const QuantizePairs pairs(index);
  EXPECT_EQ(pairs.dequantizers(node_named(m, "qa")).size(), 2u);
  EXPECT_EQ(pairs.quantizer(node_named(m, "db")), node_named(m, "qa"));
  EXPECT_TRUE(pairs.check(nodes_named(m, {"qa", "da", "db"})).ok());
  const Status broken = pairs.check(nodes_named(m, {"a", "qa", "da", "m"}));
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().what.find("'qa'"), std::string::npos) << broken.error().what;
  // A DequantizeLinear without its QuantizeLinear reads the quantized value as a cut input: fine.
  EXPECT_TRUE(pairs.check(nodes_named(m, {"da", "m"})).ok());
  // Nor may the quantized value be marked as an output: an engine takes it only into its DequantizeLinear.
  const std::vector<std::string> marked{"da", "qa"};
  EXPECT_FALSE(pairs.check(nodes_named(m, {"qa", "da", "db"}), marked).ok());
}

TEST(QuantizePairs, AQuantizeAlreadyLoneInTheModelHeadsNoPair) {
  Model m = parse_model(kQdq);
  const GraphIndex index = GraphIndex::build(m.graph).value();
  const QuantizePairs pairs(index);
  EXPECT_TRUE(pairs.dequantizers(node_named(m, "L")).empty());   // a graph output
  EXPECT_TRUE(pairs.dequantizers(node_named(m, "qr")).empty());  // also read by a Cast
  EXPECT_FALSE(pairs.quantizer(node_named(m, "dr")));
  EXPECT_TRUE(pairs.check(nodes_named(m, {"L", "qr"})).ok());
}

// The failure needs the quantized Mul (m) and the quantization (qa): without the rule the
// 1-minimal result would be {qa, m}, a QuantizeLinear feeding nothing.
TEST(QdqReduction, AFailureDownstreamOfTheQuantizationKeepsThePairWholeForEveryJobCount) {
  Model m = parse_model(kQdq);
  auto pred = [](const CandidateView& v) { return v.has("qa") && v.has("m"); };
  const auto one = reduce_watched(m, pred, 1);
  EXPECT_EQ(kept_names(m, one.best), (std::set<std::string>{"qa", "da", "db", "m"}));
  EXPECT_TRUE(one.one_minimal);
  const auto four = reduce_watched(m, pred, 4);
  EXPECT_EQ(four.best, one.best);
}

// Removing a DequantizeLinear takes its QuantizeLinear along; a DequantizeLinear may stay alone.
TEST(QdqReduction, ADequantizeStaysWithoutItsQuantizeWhenTheFailureDoesNotNeedIt) {
  Model m = parse_model(kQdq);
  const auto r = reduce_watched(m, [](const CandidateView& v) { return v.has("da") && v.has("m"); }, 1);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"da", "m"}));
  EXPECT_TRUE(r.one_minimal);
}

TEST(QdqReduction, AFailureInTheQuantizationReducesToTheQuantizeWithItsDequantizers) {
  Model m = parse_model(kQdq);
  const auto r = reduce_watched(m, [](const CandidateView& v) { return v.has("qa"); }, 1);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"qa", "da", "db"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(reduce_watched(m, [](const CandidateView& v) { return v.has("qa"); }, 4).best, r.best);
}

TEST(QdqReduction, AQuantizeLoneInTheModelMayStayLone) {
  Model m = parse_model(kQdq);
  EXPECT_EQ(kept_names(m, reduce_watched(m, [](const CandidateView& v) { return v.has("L"); }, 1).best),
            (std::set<std::string>{"L"}));
  EXPECT_EQ(kept_names(m, reduce_watched(m, [](const CandidateView& v) { return v.has("qr"); }, 1).best),
            (std::set<std::string>{"qr"}));
}

// The precision strategy's nodes are the ones an engine keeps in FP32, in the whole model: a
// QuantizeLinear alone in that set breaks nothing.
TEST(QdqReduction, ThePrecisionStrategyMayNameAQuantizeWithoutItsDequantizers) {
  Model m = parse_model(kQdq);
  const auto r = reduce_watched(m, [](const CandidateView& v) { return v.has("qa"); }, 1, "precision");
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"qa"}));
}

}  // namespace
}  // namespace reduce
