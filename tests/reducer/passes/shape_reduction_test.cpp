// shape-reduction: dims of graph inputs to 1, else the smallest halving the failure survives.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

// A failure that does not depend on sizes: every dim of every input goes to 1 in one check.
TEST(Reducer, ShapesTheFailureDoesNotNeedGoToOneInOneCheck) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[4, 8, 16] x, float[4, 8, 16] z) => (float[4, 8, 16] y)
{
  y = Add(x, z)
}
)");
  SyntheticTest t(m, needs({"y"}));
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {1, 1, 1}}, {"z", {1, 1, 1}}}));
  EXPECT_EQ(t.calls, 1u);
}

// The failure needs the last dim whole: after every dim at 1 and every dim halved (both refused),
// each dim is halved on its own until refused or 1, and a refused dim is never tried again.
TEST(Reducer, EachDimIsHalvedOnItsOwnAndARefusedDimIsNotTriedAgain) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[8, 8, 16] x) => (float[8, 8, 16] y)
{
  y = Relu(x)
}
)");
  SyntheticTest t(m, [](const CandidateView& v) {
    auto it = v.candidate.input_shapes.find("x");
    return v.has("y") && (it == v.candidate.input_shapes.end() || it->second[2] == 16);
  });
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {1, 1, 16}}}));
  // 2 refused (all at 1, all halved); the first two dims straight to 1; the last at 1 is the
  // candidate refused first (the cache answers), then its halvings are bisected: 4 and 8
  // refused. 6 checks (halving step by step took 9, scans from the first option 14).
  EXPECT_EQ(t.calls, 6u);
}

TEST(Reducer, ADimTheFailureNeedsSomeOfIsBisectedOverItsHalvings) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[8, 64] x) => (float[8, 64] y)
{
  y = Relu(x)
}
)");
  // The failure needs more than 4 columns and more than 1 row.
  SyntheticTest t(m, [](const CandidateView& v) {
    auto it = v.candidate.input_shapes.find("x");
    return v.has("y") && (it == v.candidate.input_shapes.end() || (it->second[0] > 1 && it->second[1] > 4));
  });
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {2, 8}}}));
  // all at 1 refused; all halved holds twice ([4,32], [2,16]), then refused ([1,8]); rows: 1
  // refused and nothing between; columns 16: 1 refused, then the halvings 8, 4, 2 bisected: 4
  // refused, 8 holds. 8 checks, where halving step by step took 7: trying 1 first costs a check
  // on a dim the failure needs some of, and saves one per halving on a dim it does not need.
  EXPECT_EQ(t.calls, 8u);
}

}  // namespace
}  // namespace reduce
