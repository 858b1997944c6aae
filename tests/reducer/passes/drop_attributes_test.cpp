// drop-attributes: node attributes back to their defaults where the failure survives, the edits
// accumulated in one pass (independent_edits.cpp).
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, AttributesTheFailureDoesNotNeedAreDropped) {
  Model m = parse_model(kWeighted);
  const size_t transpose = 1, leaky = 3;
  // The failure needs the transposition (dropping perm would reverse dims anyway, but say it
  // changes the failure) and not LeakyRelu's slope.
  SyntheticTest t(m, [&](const CandidateView& v) {
    const auto& d = v.candidate.dropped_attributes;
    return v.has("t") && v.has("y") && std::find(d.begin(), d.end(), std::make_pair(transpose, std::string("perm"))) == d.end();
  });
  auto r = reduce_checked(m, t);
  EXPECT_EQ(r.best.dropped_attributes, (std::vector<std::pair<size_t, std::string>>{{leaky, "alpha"}}));
  EXPECT_TRUE(r.one_minimal);
}

TEST(Reducer, EditsThatFailOnlyInSmallerSetsAreAccumulatedInOnePass) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
slopes (float[2] x) => (float[2] c)
{
  a = LeakyRelu<alpha = 0.2>(x)
  b = LeakyRelu<alpha = 0.3>(a)
  c = LeakyRelu<alpha = 0.4>(b)
}
)");
  // Any one or two slopes may go back to the default, not all three.
  SyntheticTest t(m, [](const CandidateView& v) {
    return v.has("a") && v.has("b") && v.has("c") && v.candidate.dropped_attributes.size() <= 2;
  });
  ReduceOptions opts;
  opts.passes = select_passes({"drop-attributes"}).value();
  auto r = reduce_checked(m, t, opts);
  // In order: the first two are accepted, the third would make three.
  EXPECT_EQ(r.best.dropped_attributes, (std::vector<std::pair<size_t, std::string>>{{0, "alpha"}, {1, "alpha"}}));
  // All three (1), the first (1), the first two (1): the set of all three is not asked again,
  // and no second round has anything new to test.
  EXPECT_EQ(t.calls, 3u);
}

}  // namespace
}  // namespace reduce
