// fill-weights: float weights filled with one value, 0 or 1, where the failure survives.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, WeightsTheFailureDoesNotNeedAreFilledWithZeros) {
  Model m = parse_model(kWeighted);
  SyntheticTest t(m, needs({"m", "t", "a", "y"}));
  auto r = reduce_checked(m, t);
  EXPECT_EQ(r.best.filled, (std::map<std::string, double, std::less<>>{{"b", 0.0}, {"w", 0.0}}));
}

TEST(Reducer, WeightsAreFilledWithOnesWhenZerosSilenceTheFailureAndKeptWhenTheirValuesMatter) {
  Model m = parse_model(kWeighted);
  // w must not be zero; b's values matter.
  SyntheticTest t(m, [](const CandidateView& v) {
    const auto& f = v.candidate.filled;
    return v.has("m") && v.has("t") && v.has("a") && !f.count("b") && !(f.count("w") && f.at("w") == 0.0);
  });
  auto r = reduce_checked(m, t);
  EXPECT_EQ(r.best.filled, (std::map<std::string, double, std::less<>>{{"w", 1.0}}));
}

}  // namespace
}  // namespace reduce
