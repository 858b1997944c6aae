// Where a scan of releases (`reduce check --engine ort@A,ort@B,...`) finds the verdict or the support
// changing, and the reduction it prints: the failing release against the passing one, releases that did
// not run skipped, releases that cannot take the model never called failing or fixed.
#include <gtest/gtest.h>

#include "oracle/release_scan.h"

namespace reduce {
namespace {

ReleaseVerdict passing(const std::string& spec) { return {spec, Verdict{}, ""}; }
ReleaseVerdict failing(const std::string& spec) {
  Verdict v;
  v.signature.kind = FailureKind::Crash;
  return {spec, v, ""};
}
ReleaseVerdict not_run(const std::string& spec) { return {spec, std::nullopt, "cannot be installed"}; }
ReleaseVerdict invalid(const std::string& spec) { return {spec, Verdict::invalid_because("float16"), ""}; }
// A release that refused the model for a limit of its own: an error verdict that names the limit.
ReleaseVerdict cannot_take(const std::string& spec, const std::string& limit = "IR version 10; it reads up to 9") {
  Verdict v;
  v.signature.kind = FailureKind::Error;
  v.signature.message = v.signature.normalized = "Unsupported model IR version";
  v.cannot_take = limit;
  return {spec, v, ""};
}

TEST(ReleaseScan, ARegressionIsTheNewerFailingReleaseAgainstTheLastPassingOne) {
  const std::vector<ReleaseVerdict> scan{passing("ort@1.14.0"), passing("ort@1.16.3"), not_run("ort@1.8.0"),
                                         failing("ort@1.17.0"), failing("ort@1.30.0")};
  const auto changes = release_changes(scan);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].passing(), 1u);
  EXPECT_EQ(changes[0].failing(), 3u);
  EXPECT_EQ(changes[0].kind, ReleaseChangeKind::Regressed);
  EXPECT_EQ(scan_class(scan), "regressed");
  EXPECT_EQ(release_scan_summary(scan, "dir/m.onnx"),
            "regressed: passes on ort@1.16.3, fails from ort@1.17.0: reduce dir/m.onnx --engine ort@1.17.0 "
            "--reference ort@1.16.3 -o m.reduced");
}

TEST(ReleaseScan, AFixIsTheLastFailingReleaseAgainstTheFirstPassingOne) {
  const std::vector<ReleaseVerdict> scan{failing("ort@1.14.0"), invalid("ort@1.15.0"), passing("ort@1.16.3"),
                                         failing("ort@1.30.0")};
  // Every change is said: the fix, then the regression after it, each with its reduction in a folder of its own.
  const auto changes = release_changes(scan);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].kind, ReleaseChangeKind::Fixed);
  EXPECT_EQ(changes[1].kind, ReleaseChangeKind::Regressed);
  EXPECT_EQ(release_scan_summary(scan, "m.onnx", " --inputs 'a b' --atol 0.5"),
            "fixed: fails up to ort@1.14.0, passes from ort@1.16.3: reduce m.onnx --engine ort@1.14.0 --reference "
            "ort@1.16.3 --inputs 'a b' --atol 0.5 -o m.ort-1.14.0.reduced\n"
            "regressed: passes on ort@1.16.3, fails from ort@1.30.0: reduce m.onnx --engine ort@1.30.0 --reference "
            "ort@1.16.3 --inputs 'a b' --atol 0.5 -o m.ort-1.30.0.reduced");
  const std::vector<ReleaseVerdict> fix{failing("ort@1.14.0"), passing("ort@1.16.3")};
  EXPECT_EQ(release_scan_summary(fix, "my models/m.onnx"),
            "fixed: fails up to ort@1.14.0, passes from ort@1.16.3: reduce 'my models/m.onnx' --engine ort@1.14.0 "
            "--reference ort@1.16.3 -o m.reduced");
}

ReleaseVerdict failing_with(const std::string& spec, FailureKind kind, const std::string& normalized) {
  Verdict v;
  v.signature.kind = kind;
  v.signature.normalized = normalized;
  v.signature.message = normalized;
  return {spec, v, ""};
}

// A failure that turns into another between two releases that both fail (issue 67: DFT irfft goes from
// a load error to a wrong shape) is said with both, and reduced on the newer one; the same failure on
// both, or a later fix, is not such a change.
TEST(ReleaseScan, AFailureThatTurnsIntoAnotherIsSaidWithBoth) {
  const std::vector<ReleaseVerdict> scan{failing_with("ort@1.22.0", FailureKind::Error, "cannot load DFT"), not_run("ort@1.23.0"),
                                         failing_with("ort@1.26.0", FailureKind::Shape, "shape differs")};
  const std::string line = release_scan_summary(scan, "m.onnx", " --inputs in");
  EXPECT_EQ(line.rfind("failure changed: error", 0), 0u) << line;
  EXPECT_NE(line.find(" on ort@1.22.0, shape"), std::string::npos) << line;
  EXPECT_NE(line.find(" from ort@1.26.0: reduce m.onnx --engine ort@1.26.0 --inputs in -o m.reduced"), std::string::npos) << line;
  // Another error message is another failure too; the same one is not.
  EXPECT_EQ(release_scan_summary({failing_with("a", FailureKind::Error, "x"), failing_with("b", FailureKind::Error, "y")}, "m.onnx")
                .rfind("failure changed: ", 0),
            0u);
  EXPECT_EQ(release_scan_summary({failing_with("a", FailureKind::Error, "x"), failing_with("b", FailureKind::Error, "x")}, "m.onnx"),
            "every release that ran fails: no passing release to take as the reference");
  // Where in the engine's source an error was raised is no part of what it says (its text differs
  // between releases of ONNX Runtime for one refusal).
  EXPECT_EQ(release_scan_summary({failing_with("a", FailureKind::Error, "Failed to load model with error: <path>:<n> void "
                                                                       "ns::Check(const std::map<int, int>&, bool) const bad DFT"),
                                  failing_with("b", FailureKind::Error, "<path>:<n> ns::Check(const Map&) bad DFT")},
                                 "m.onnx"),
            "every release that ran fails: no passing release to take as the reference");
  // A fix, then a failure of another kind: both are said.
  const std::string fixed = release_scan_summary({failing_with("a", FailureKind::Error, "x"), passing("b"),
                                                  failing_with("c", FailureKind::Shape, "s")}, "m.onnx");
  EXPECT_EQ(fixed.rfind("fixed: ", 0), 0u) << fixed;
  EXPECT_NE(fixed.find("\nregressed: passes on b, fails from c"), std::string::npos) << fixed;
}

// issue 67: a release that cannot load the model (IR version or opset newer than it knows, no kernel, a
// type its binding cannot pass) is neither a failure nor a fix: its own class, and support added or
// removed where it changes, with no reduction.
TEST(ReleaseScan, AReleaseThatCannotTakeTheModelIsNeverFailingOrFixed) {
  const std::vector<ReleaseVerdict> scan{cannot_take("ort@1.12.1"), cannot_take("ort@1.15.1"), passing("ort@1.17.3"),
                                         passing("ort@1.26.0")};
  EXPECT_EQ(scan[0].line(), "CANNOT TAKE (IR version 10; it reads up to 9)");
  EXPECT_FALSE(scan[0].ran());
  EXPECT_FALSE(scan[0].fails());
  const auto changes = release_changes(scan);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ReleaseChangeKind::SupportAdded);
  EXPECT_FALSE(changes[0].asks_for_reduction());
  EXPECT_EQ(scan_class(scan), "support added");
  EXPECT_EQ(release_scan_summary(scan, "m.onnx"),
            "support added: ort@1.15.1 cannot take it (IR version 10; it reads up to 9), ort@1.17.3 runs it (and passes)");
  // A model the first release to take it gets wrong fails: a wrong answer says more than the support.
  EXPECT_EQ(scan_class({cannot_take("a"), failing("b")}), "fails");
  // A fix across a release that cannot take the model is still the fix (verdicts compare the releases that ran).
  const std::vector<ReleaseVerdict> across{failing("a"), cannot_take("b"), passing("c")};
  const auto kinds = release_changes(across);
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0].kind, ReleaseChangeKind::SupportRemoved);
  EXPECT_EQ(kinds[1].kind, ReleaseChangeKind::SupportAdded);
  EXPECT_EQ(kinds[2].kind, ReleaseChangeKind::Fixed);
  EXPECT_EQ(kinds[2].failing(), 0u);
  EXPECT_EQ(scan_class(across), "fixed");
  // A limit of the tool's binding (an invalid verdict that names it) is the release's limit too.
  Verdict binding = Verdict::invalid_because("float16");
  binding.cannot_take = "its JavaScript binding cannot pass float16 tensors";
  const ReleaseVerdict refused{"ort@1.17.3", binding, ""};
  EXPECT_TRUE(refused.cannot_take());
  EXPECT_EQ(scan_class({refused, cannot_take("b")}), "cannot take");
  EXPECT_EQ(release_scan_summary({refused, cannot_take("b")}, "m.onnx"), "no release can take the model");
}

TEST(ReleaseScan, NoChangeSaysWhichWay) {
  EXPECT_EQ(release_scan_summary({failing("a"), not_run("b"), failing("c")}, "m.onnx"),
            "every release that ran fails: no passing release to take as the reference");
  EXPECT_EQ(release_scan_summary({passing("a"), passing("c")}, "m.onnx"), "every release that ran passes");
  EXPECT_EQ(release_scan_summary({not_run("a"), invalid("b")}, "m.onnx"), "no release gave a verdict");
  EXPECT_TRUE(release_changes({failing("a"), not_run("b")}).empty());
  EXPECT_EQ(scan_class({failing("a"), not_run("b")}), "fails");
  EXPECT_EQ(scan_class({passing("a"), passing("b")}), "passes");
  EXPECT_EQ(scan_class({not_run("a")}), "not run");
  EXPECT_EQ(not_run("a").line(), "NOT RUN: cannot be installed");
}

}  // namespace
}  // namespace reduce
