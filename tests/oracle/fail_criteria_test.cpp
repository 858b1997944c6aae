// --fail-regex: RE2 patterns searched in time linear in the output (no recursion, no backtracking),
// and the one-line refusals of patterns that do not compile or use what RE2 leaves out.
#include <gtest/gtest.h>

#include <string>

#include "fail_criteria.h"
#include "oracle/oracle.h"
#include "test_support.h"

namespace reduce {
namespace {

FailCriteria regexes(std::vector<std::string> patterns) {
  auto c = FailCriteria::create(patterns, {}, {});
  EXPECT_TRUE(c.ok()) << c.error().message();
  return std::move(c).value();
}

std::string refusal(const std::string& pattern) {
  auto c = FailCriteria::create({"ok", pattern}, {}, {});
  return c.ok() ? "(accepted)" : c.error().message();
}

// A build log whose progress bar is redrawn with \r: one line of a megabyte, then the assertion.
std::string megabyte_line() {
  std::string line = "[I] building engine\r";
  while (line.size() < (size_t{1} << 20)) line += "xy";
  return line + " Assertion failed: Cast to FP16";
}

// std::regex recursed once per character of `[^\n]*` or `(x|y)*`: a 100 KB line overflowed the stack.
TEST(FailRegex, AMegabyteLineGetsAVerdict) {
  const std::string log = megabyte_line();
  EXPECT_TRUE(regexes({"[^\\n]*Cast"}).matches_regex(log));
  EXPECT_FALSE(regexes({"(x|y)*z"}).matches_regex(log));
  EXPECT_TRUE(regexes({"(x|y)*z"}).matches_regex(log + "z"));
}

// std::regex tried every split of the a's among the stars: it never returned on 200 of them.
TEST(FailRegex, NestedStarsOnALongLineAnswerWithoutBacktracking) {
  const FailCriteria c = regexes({"(a*)*(a*)*(a*)*b$"});
  const std::string line(200, 'a');
  EXPECT_FALSE(c.matches_regex(line));
  EXPECT_FALSE(c.matches_regex(line + "b\n"));  // $ is the end of the whole output
  EXPECT_TRUE(c.matches_regex(line + "b"));
}

TEST(FailRegex, SearchesAnywhereAsBytesWithECMAScriptAnchors) {
  EXPECT_TRUE(regexes({"Assertion.*Cast"}).matches_regex("log\n[E] Assertion \xff failed: Cast\nmore"));
  EXPECT_FALSE(regexes({"^Assertion"}).matches_regex("log\nAssertion"));
  EXPECT_TRUE(regexes({"(?m)^Assertion"}).matches_regex("log\nAssertion"));
  EXPECT_TRUE(regexes({"(?i)assertion"}).matches_regex("ASSERTION"));
}

TEST(FailRegex, APatternThatDoesNotCompileIsRefusedInOneLineNamingIt) {
  const std::string message = refusal("(");
  EXPECT_EQ(message, "invalid --fail-regex '(': missing ): (");
}

TEST(FailRegex, BackreferencesAndLookaroundAreRefusedWithTheReason) {
  EXPECT_EQ(refusal("(a)\\1"),
            "invalid --fail-regex '(a)\\1': invalid escape sequence: \\1 (RE2 has no backreferences; docs/oracle.md)");
  EXPECT_NE(refusal("Cast(?=16)").find("RE2 has no lookahead"), std::string::npos);
  EXPECT_NE(refusal("(?<!FP)16").find("RE2 has no lookbehind"), std::string::npos);
  for (const char* p : {"(a)\\1", "Cast(?=16)", "(?<!FP)16"}) EXPECT_EQ(refusal(p).find('\n'), std::string::npos) << p;
}

// Past 64 MiB only the head and the tail are searched: one verdict's matching stays bounded.
TEST(FailRegex, OfAnOutputOverTheBoundTheHeadAndTheTailAreSearched) {
  const FailCriteria c = regexes({"MARK"});
  std::string output(FailCriteria::kSearchedBytes + 4096, '.');
  output.replace(output.size() / 2, 4, "MARK");
  EXPECT_FALSE(c.matches_regex(output));
  output.replace(output.size() - 10, 4, "MARK");
  EXPECT_TRUE(c.matches_regex(output));
  // The output ends in MARK and 6 dots; the head ends in 32 MiB of dots, but not the output.
  EXPECT_TRUE(regexes({"\\.{6}$"}).matches_regex(output));
  EXPECT_FALSE(regexes({"\\.{7}$"}).matches_regex(output));
}

// An engine that fails on every model with the message it was given.
class LoudEngine : public Engine {
 public:
  explicit LoudEngine(std::string message) : message_(std::move(message)) {}
  std::string name() const override { return "loud"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model&) override { return make_error(message_); }

 private:
  std::string message_;
};

SignatureMatch match_of_loud_engine(const std::string& pattern) {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y)
{
  Y = Relu(X)
}
)");
  OracleOptions o;
  o.engine = "loud";
  o.engine_instance = std::make_shared<LoudEngine>(megabyte_line());
  o.fail_regexes = {pattern};
  std::vector<NamedTensor> inputs{{"X", Tensor::from_vector(DType::Float, {2}, std::vector<float>{1, -1}).value()}};
  auto oracle = Oracle::create(m, inputs, o);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  return (*oracle)->target().match((*oracle)->evaluate(Candidate::whole(m.graph)));
}

TEST(FailRegex, TheOracleJudgesAnEngineMessageOfAMegabyteLine) {
  EXPECT_EQ(match_of_loud_engine("[^\\n]*Cast"), SignatureMatch::Same);
  EXPECT_EQ(match_of_loud_engine("(x|y)*z"), SignatureMatch::Different);
}

}  // namespace
}  // namespace reduce
