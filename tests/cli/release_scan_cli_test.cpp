// Issue 67 end to end on real npm releases and ONNX's own node tests (extracted by the node-test fixture):
// release scans a maintainer can read. A release that cannot take a model (an IR version or opset newer
// than it knows, no kernel, a type its binding cannot pass) is its own verdict, never a failure or a
// fix; the ReduceX empty-set fixes of 1.17.3 are the fixed rows; every change is named by its class;
// the printed reduction runs as printed; `reduce batch DIR --engine A,B` scans a folder of test cases.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const fs::path kNodeTests = fs::path(REDUCE_BINARY_DIR) / "onnx-node-tests-1.23";

std::vector<std::string> check_case(const std::string& name, const std::string& releases, testing::ProcessRun* out = nullptr) {
  const fs::path c = kNodeTests / name;
  auto r = run_reduce({"check", (c / "model.onnx").string(), "--engine", releases, "--inputs", (c / "test_data_set_0").string(),
                       "--expected", (c / "test_data_set_0").string()});
  if (out) *out = r;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(ReleaseScan, AFloat16TestCaseOn1173IsCannotTakeNotAFailure) {
  testing::ProcessRun r;
  const auto lines = check_case("test_isnan_float16", "ort@1.15.1,ort@1.17.3,ort@1.26.0", &r);
  EXPECT_TRUE(has(r.out, "ort@1.17.3: CANNOT TAKE (")) << r.out;
  EXPECT_FALSE(has(r.out, "ort@1.17.3: FAIL")) << r.out;
  EXPECT_FALSE(has(r.out, "fixed")) << r.out;
  EXPECT_TRUE(has(r.out, "support added: ort@1.17.3 cannot take it")) << r.out;
}

TEST(ReleaseScan, DftIrfftBetween1220And1260IsAChangedFailure) {
  testing::ProcessRun r;
  check_case("test_dft_irfft_opset19", "ort@1.22.0,ort@1.26.0", &r);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "ort@1.22.0: FAIL (error: ONNX Runtime: Node () Op (DFT) [ShapeInferenceError]")) << r.out;
  EXPECT_TRUE(has(r.out, "ort@1.26.0: FAIL (shape: ")) << r.out;
  EXPECT_TRUE(has(r.out, "failure changed: error: ")) << r.out;
  EXPECT_TRUE(has(r.out, " from ort@1.26.0: reduce ")) << r.out;
}

// The printed command for the fix, pasted in another folder as printed, reduces it to its ReduceSum.
TEST(ReleaseScan, ThePrintedCommandForReduceSumEmptySetRunsAsPrinted) {
  testing::ProcessRun r;
  const auto lines = check_case("test_reduce_sum_empty_set", "ort@1.15.1,ort@1.17.3", &r);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto fixed = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("fixed: ", 0) == 0; });
  ASSERT_NE(fixed, lines.end()) << r.out;
  EXPECT_TRUE(has(*fixed, "fixed: fails up to ort@1.15.1, passes from ort@1.17.3: reduce ")) << *fixed;
  const std::string command = fixed->substr(fixed->find("reduce "));
  TempDir dir;
  auto pasted = run_process({"sh", "-c", "cd \"$0\" && PATH=\"$1:$PATH\" " + command, dir.path().string(), std::string(REDUCE_BINARY_DIR)});
  EXPECT_EQ(pasted.exit_code, 0) << command << "\n" << pasted.out << pasted.err;
  const auto report = nlohmann::json::parse(read_bytes(dir / "model.reduced" / "report.json"));
  EXPECT_EQ(report["reduced"]["op_types"], nlohmann::json({{"ReduceSum", 1}})) << report.dump(1);
}

// `reduce batch` over a folder of node tests on 1.15.1 and 1.17.3: the ReduceX empty-set cases are the
// fixed rows (each reduced into a bundle), a release that cannot load a model is never called failing or
// fixed, the class table heads the summary, and a second run resumes without checking anything again.
TEST(ReleaseScan, ABatchOverNodeTestsFindsTheFixesAndNeverCallsARefusalAFailure) {
  TempDir dir;
  const fs::path cases = dir / "cases";
  fs::create_directories(cases);
  std::set<std::string> empty_set;
  size_t linked = 0;
  for (const auto& e : fs::directory_iterator(kNodeTests)) {
    const std::string name = e.path().filename().string();
    const bool reduce_empty = name.rfind("test_reduce_", 0) == 0 && has(name, "empty_set");
    // Beside them: cases 1.15.1 cannot load (opsets and IR versions after it), float16 ones, passing ones.
    const bool other = name == "test_isnan_float16" || name == "test_abs" || name == "test_add" || name == "test_relu" ||
                       name == "test_rms_normalization_2d_axis0" || name == "test_attention_3d" || name == "test_dft_irfft_opset19";
    if (!reduce_empty && !other) continue;
    if (reduce_empty) empty_set.insert(name);
    fs::create_directory_symlink(e.path(), cases / name);
    ++linked;
  }
  ASSERT_GE(empty_set.size(), 16u);
  auto r = run_reduce({"batch", cases.string(), "--engine", "ort@1.15.1,ort@1.17.3", "-o", (dir / "out").string(), "-j", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // some fail on 1.15.1
  const auto summary = nlohmann::json::parse(read_bytes(dir / "out" / "summary.json"));
  ASSERT_EQ(summary["models"].size(), linked) << summary.dump(1);
  std::set<std::string> fixed;
  size_t cannot_take = 0;
  for (const auto& m : summary["models"]) {
    const std::string name = m["name"];
    if (m["class"] == "fixed") fixed.insert(name);
    for (size_t k = 0; k < m["verdicts"].size(); ++k) {
      if (m["verdicts"][k]["verdict"] != "cannot take") continue;
      ++cannot_take;
      // A release that cannot take the model is in no change of behaviour.
      for (const auto& c : m["changes"])
        if (c["from"] == m["verdicts"][k]["release"] || c["to"] == m["verdicts"][k]["release"])
          EXPECT_TRUE(c["kind"] == "support added" || c["kind"] == "support removed") << m.dump(1);
    }
    if (m["class"] == "fixed") {
      ASSERT_EQ(m["changes"].size(), 1u) << m.dump(1);
      EXPECT_EQ(m["changes"][0]["status"], "reduced") << m.dump(1);
      EXPECT_TRUE(has(m["changes"][0]["command"].get<std::string>(), " --engine ort@1.15.1 --reference ort@1.17.3 ")) << m.dump(1);
      EXPECT_TRUE(fs::exists(fs::path(m["changes"][0]["bundle"].get<std::string>()) / "report.json")) << m.dump(1);
    }
  }
  EXPECT_GE(cannot_take, 3u) << summary.dump(1);
  // The ReduceX empty-set cases that 1.15.1 runs and gets wrong are exactly the fixed rows: eight (the
  // others of them are IR version 14, which neither reads, or opset 20, which 1.15.1 does not know).
  const std::set<std::string> eight{"test_reduce_l1_empty_set", "test_reduce_l1_empty_set_expanded", "test_reduce_l2_empty_set",
                                    "test_reduce_l2_empty_set_expanded", "test_reduce_prod_empty_set", "test_reduce_sum_empty_set",
                                    "test_reduce_sum_square_empty_set", "test_reduce_sum_square_empty_set_expanded"};
  EXPECT_EQ(fixed, eight) << summary.dump(1);
  const std::string md = read_bytes(dir / "out" / "summary.md");
  EXPECT_TRUE(has(md, "| class | models | what it means |\n")) << md;
  EXPECT_TRUE(has(md, "| fixed | " + std::to_string(fixed.size()) + " |")) << md;
  // Run again: every row is kept, nothing is checked or reduced again, the same summary.
  auto again = run_reduce({"batch", cases.string(), "--engine", "ort@1.15.1,ort@1.17.3", "-o", (dir / "out").string(), "-j", "2"});
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_TRUE(has(again.err, "(" + std::to_string(linked) + " scanned before)")) << again.err;
  EXPECT_FALSE(has(again.err, "batch: [1/")) << again.err;
  EXPECT_EQ(nlohmann::json::parse(read_bytes(dir / "out" / "summary.json"))["classes"], summary["classes"]);
}

TEST(ReleaseScan, ABadReleaseListOrFolderIsOneLine) {
  TempDir dir;
  auto bad = run_reduce({"batch", kNodeTests.string(), "--engine", "ort@1.15.1,ort@nope", "-o", (dir / "out").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(has(bad.err, "error: --engine: ")) << bad.err;
  auto missing = run_reduce({"batch", (dir / "nowhere").string(), "--engine", "ort@1.15.1,ort@1.17.3", "-o", (dir / "out").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.md"));
}

}  // namespace
}  // namespace reduce
