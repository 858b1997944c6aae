// Messages between ranks: what rank 0 sends and receives comes back exactly, and a malformed
// message is an error, not a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cluster/messages.h"

namespace reduce::cluster {
namespace {

TEST(ClusterMessages, ACandidateWithEveryEditRoundTrips) {
  Candidate c;
  c.nodes = {0, 3, 7};
  c.frozen = {"a", "b"};
  c.outputs = {"y"};
  c.input_shapes["x"] = {1, 3, 8};
  c.filled["w"] = -0.1;
  c.dropped_attributes = {{3, "axis"}};
  auto back = decode_check(encode_check(42, c));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->first, 42u);
  EXPECT_EQ(back->second, c);
  EXPECT_EQ(candidate_hash(back->second), candidate_hash(c));
}

TEST(ClusterMessages, AVerdictRoundTripsWithNonFiniteStatistics) {
  Verdict v;
  v.signature = {FailureKind::Mismatch, "output y: max abs 3", "output <name>: max abs <n>", 0, 2};
  OutputComparison o;
  o.name = "y";
  o.passed = false;
  o.nan = 5;
  o.max_abs = std::numeric_limits<double>::infinity();
  o.mean_abs = std::numeric_limits<double>::quiet_NaN();
  o.ratio = 1234.5;
  o.first_bad = 17;
  v.outputs = {o};
  v.seconds = 0.25;
  auto back = decode_verdict(encode_verdict(7, v));
  ASSERT_TRUE(back.ok()) << back.error().message();
  const Verdict& w = back->second;
  EXPECT_EQ(back->first, 7u);
  EXPECT_EQ(w.signature.kind, FailureKind::Mismatch);
  EXPECT_EQ(w.signature.normalized, v.signature.normalized);
  EXPECT_EQ(w.signature.magnitude, 2);
  ASSERT_EQ(w.outputs.size(), 1u);
  EXPECT_FALSE(w.outputs[0].passed);
  EXPECT_EQ(w.outputs[0].nan, 5u);
  EXPECT_TRUE(std::isinf(w.outputs[0].max_abs));
  EXPECT_TRUE(std::isnan(w.outputs[0].mean_abs));
  EXPECT_EQ(w.outputs[0].ratio, 1234.5);
  EXPECT_EQ(w.outputs[0].first_bad, 17u);
  EXPECT_EQ(w.seconds, 0.25);
}

// The newest kind crosses ranks too, with what differs on each output.
TEST(ClusterMessages, AShapeVerdictRoundTripsWithWhatDiffers) {
  Verdict v;
  OutputComparison o;
  o.name = "y";
  o.passed = false;
  o.structural_problem = "float[1,4] on the engine, float[1,3] on the reference";
  o.shape_differs = true;
  v.outputs = {o};
  v.signature = signature_of_outputs(v.outputs);
  auto back = decode_verdict(encode_verdict(3, v));
  ASSERT_TRUE(back.ok()) << back.error().message();
  const Verdict& w = back->second;
  EXPECT_EQ(w.signature.kind, FailureKind::Shape);
  EXPECT_EQ(w.signature.to_string(), v.signature.to_string());
  ASSERT_EQ(w.outputs.size(), 1u);
  EXPECT_TRUE(w.outputs[0].shape_differs);
  EXPECT_FALSE(w.outputs[0].dtype_differs);
  EXPECT_EQ(w.outputs[0].structural_problem, o.structural_problem);
}

TEST(ClusterMessages, AHelloRoundTrips) {
  auto back = decode_hello(encode_hello({false, "model.onnx: no such file", 4, 50}));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->ready);
  EXPECT_EQ(back->error, "model.onnx: no such file");
  EXPECT_EQ(back->slots, 4);
  EXPECT_EQ(back->model_nodes, 50u);
}

TEST(ClusterMessages, ABatchAttemptAndItsResultRoundTrip) {
  const Attempt a{5, 2, "/shared/out/.m.attempt-2"};
  auto work = decode_work(encode_work(a));
  ASSERT_TRUE(work.ok()) << work.error().message();
  ASSERT_TRUE(work->has_value());
  EXPECT_EQ(**work, a);
  auto none = decode_work(encode_work(std::nullopt));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto done = decode_done(encode_done(a, "reduced"));
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->first, a);
  EXPECT_EQ(done->second, "reduced");
}

TEST(ClusterMessages, MalformedBytesAreAnError) {
  EXPECT_FALSE(decode_check("not cbor").ok());
  EXPECT_FALSE(decode_verdict(encode_id(3)).ok());  // a verdict without its fields
  EXPECT_FALSE(decode_id("").ok());
  EXPECT_FALSE(decode_done(encode_work(std::nullopt)).ok());  // a result without its attempt
}

}  // namespace
}  // namespace reduce::cluster
