// Words for the user (issue 68): "did you mean" and progress lines' share done and time left.
#include <gtest/gtest.h>

#include "core/progress_estimate.h"
#include "core/spelling.h"

namespace reduce {
namespace {

TEST(Spelling, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  EXPECT_EQ(edit_distance("engine", "engine"), 0u);
  EXPECT_EQ(edit_distance("enigne", "engine"), 1u);  // swapped neighbours
  EXPECT_EQ(edit_distance("chek", "check"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Spelling, TheNearestKnownWordWithinAThirdOfItsLengthOrNothing) {
  const std::vector<std::string> commands{"info", "convert", "run", "conformance", "check", "batch", "precision", "compare"};
  EXPECT_EQ(closest_word("chek", commands), "check");
  EXPECT_EQ(closest_word("comapre", commands), "compare");
  EXPECT_EQ(closest_word("CHECK", commands), "check") << "case alone";
  EXPECT_EQ(closest_word("prec", commands), "precision") << "a prefix of at least 3 letters";
  EXPECT_FALSE(closest_word("zzzzzz", commands)) << "nothing near: no guess";
  EXPECT_FALSE(closest_word("ru", {"reduce"}));
  EXPECT_FALSE(closest_word(std::string(100, 'a'), {std::string(100, 'a')})) << "a pasted paragraph is not compared";
  EXPECT_EQ(did_you_mean("enigne", {"engine", "expected"}, "--"), " (did you mean '--engine'?)");
  EXPECT_EQ(did_you_mean("xyzzy", {"engine"}), "");
}

TEST(ProgressEstimate, TheShareDoneAndTheTimeLeftAtTheRateSoFar) {
  EXPECT_EQ(share_and_time_left(0, 10, 5), "0%") << "no rate yet";
  EXPECT_EQ(share_and_time_left(5, 10, 0.5), "50%") << "under a second: no estimate";
  EXPECT_EQ(share_and_time_left(4, 10, 8), "40%, about 12 s left");
  EXPECT_EQ(share_and_time_left(1, 10, 60), "10%, about 9 min left");
  EXPECT_EQ(share_and_time_left(10, 10, 60), "100%");
  EXPECT_EQ(share_and_time_left(12, 10, 60), "100%") << "never over";
  EXPECT_EQ(share_and_time_left(0, 0, 1), "100%");
}

TEST(ProgressEstimate, AProgressLineIsThrottledAndQuietForShortWork) {
  std::vector<std::string> lines;
  ProgressLine hourly("ranking: nodes run alone", [&](const std::string& l) { lines.push_back(l); }, 3600);
  for (size_t done = 1; done <= 100; ++done) hourly(done, 100);
  EXPECT_TRUE(lines.empty()) << "work that ends within the first period says nothing";
  ProgressLine always("ranking: nodes run alone", [&](const std::string& l) { lines.push_back(l); }, 0);
  for (size_t done = 1; done <= 3; ++done) always(done, 3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("ranking: nodes run alone: 1 of 3 (33%", 0), 0u) << lines[0];
  EXPECT_EQ(lines[2], "ranking: nodes run alone: 3 of 3 (100%)");
  ProgressLine silent("x", nullptr);
  silent(1, 1);  // no printer: nothing, no crash
}

}  // namespace
}  // namespace reduce
