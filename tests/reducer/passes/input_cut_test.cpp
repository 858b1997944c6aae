// input-cut: the shortest failing suffix of a candidate, found by exponential search from the
// smallest, so a pattern of k units costs about 2 log2(k) checks however long the prefix.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

// The checks input-cut asks (alone; the reduction's other checks are not counted) to keep the
// last `needed` nodes of a chain of `length`.
size_t checks_to_keep_the_last(size_t length, size_t needed) {
  Model m = parse_model(testing::chain_model_text(length));
  std::vector<std::string> names;
  for (size_t i = length - needed; i < length; ++i) names.push_back("n" + std::to_string(i));
  SyntheticTest t(m, needs(names));
  ReduceOptions opts;
  opts.passes = select_passes({"input-cut"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), std::set<std::string>(names.begin(), names.end()));
  size_t checks = 0;
  for (const auto& p : r.passes)
    if (p.name == "input-cut") checks += p.checks;
  return checks;
}

TEST(Reducer, InputCutFindsASingleNodeOrAPairInOneOrTwoChecksWhateverTheLength) {
  EXPECT_EQ(checks_to_keep_the_last(58, 1), 1u);
  EXPECT_EQ(checks_to_keep_the_last(58, 2), 2u);
  EXPECT_EQ(checks_to_keep_the_last(150, 2), 2u);
}

TEST(Reducer, InputCutPaysForThePatternNotForThePrefixBeforeIt) {
  // A decomposed LayerNorm is 7 nodes: suffixes of 1, 2, 4 and 8 units, then 6 and 7 (a gallop
  // that stops doubling at sqrt(31) and bisects the rest asked 8).
  EXPECT_EQ(checks_to_keep_the_last(31, 7), 6u);
  // 9 nodes: 1, 2, 4, 8, 16, then 12, 10, 9; as many on 58 units as on 150.
  EXPECT_EQ(checks_to_keep_the_last(58, 9), 8u);
  EXPECT_EQ(checks_to_keep_the_last(150, 9), 8u);
}

TEST(Reducer, InputCutKeepsEverythingWhenNoSuffixFails) {
  // Only the whole chain fails: suffixes of 1, 2, 4, 8, 16 and 19 units pass, and with nothing
  // smaller failing the whole chain's own check is asked too (7).
  EXPECT_EQ(checks_to_keep_the_last(20, 20), 7u);
}

}  // namespace
}  // namespace reduce
