// Where a scan of releases (`reduce check --engine ort@A,ort@B,...`) finds the verdict changing, and the
// reduction it prints: the failing release against the passing one, releases that did not run skipped.
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

TEST(ReleaseScan, ARegressionIsTheNewerFailingReleaseAgainstTheLastPassingOne) {
  const std::vector<ReleaseVerdict> scan{passing("ort@1.14.0"), passing("ort@1.16.3"), not_run("ort@1.8.0"),
                                         failing("ort@1.17.0"), failing("ort@1.30.0")};
  const auto change = first_change(scan);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->passing, 1u);
  EXPECT_EQ(change->failing, 3u);
  EXPECT_TRUE(change->regression);
  EXPECT_EQ(release_scan_summary(scan, "dir/m.onnx"),
            "regression: passes on ort@1.16.3, fails from ort@1.17.0: reduce dir/m.onnx --engine ort@1.17.0 "
            "--reference ort@1.16.3 -o m.reduced");
}

TEST(ReleaseScan, AFixIsTheLastFailingReleaseAgainstTheFirstPassingOne) {
  const std::vector<ReleaseVerdict> scan{failing("ort@1.14.0"), invalid("ort@1.15.0"), passing("ort@1.16.3"),
                                         failing("ort@1.30.0")};
  const auto change = first_change(scan);
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->regression);
  EXPECT_EQ(release_scan_summary(scan, "m.onnx"),
            "fixed: fails up to ort@1.14.0, passes from ort@1.16.3: reduce m.onnx --engine ort@1.14.0 --reference "
            "ort@1.16.3 -o m.reduced");
  EXPECT_EQ(release_scan_summary(scan, "m.onnx", " --inputs 'a b' --atol 0.5"),
            "fixed: fails up to ort@1.14.0, passes from ort@1.16.3: reduce m.onnx --engine ort@1.14.0 --reference "
            "ort@1.16.3 --inputs 'a b' --atol 0.5 -o m.reduced");
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
  // A fix before the failure changes is the first change.
  const std::string fixed = release_scan_summary({failing_with("a", FailureKind::Error, "x"), passing("b"),
                                                  failing_with("c", FailureKind::Shape, "s")}, "m.onnx");
  EXPECT_EQ(fixed.rfind("fixed: ", 0), 0u) << fixed;
}

TEST(ReleaseScan, NoChangeSaysWhichWay) {
  EXPECT_EQ(release_scan_summary({failing("a"), not_run("b"), failing("c")}, "m.onnx"),
            "every release that ran fails: no passing release to take as the reference");
  EXPECT_EQ(release_scan_summary({passing("a"), passing("c")}, "m.onnx"), "every release that ran passes");
  EXPECT_EQ(release_scan_summary({not_run("a"), invalid("b")}, "m.onnx"), "no release gave a verdict");
  EXPECT_FALSE(first_change({failing("a"), not_run("b")}));
}

}  // namespace
}  // namespace reduce
