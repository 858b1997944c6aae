// `reduce precision`: the 1-minimal set of nodes to keep in FP32, the same for every -j; models that
// do not fail or fail even in FP32 get their own exit codes; bad input is exit 2 with one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;


TEST(PrecisionCli, FindsTheNodesThatOverflowFp16AndTheSameSetForEveryJobCount) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  // The square (about 1e5) overflows FP16; its mean, the Add and the Sqrt hold values beyond 65504
  // too, so all four must stay in FP32; the Div after them gets a value FP16 holds.
  for (const char* jobs : {"1", "3"}) {
    const auto out = dir / (std::string("bundle-j") + jobs);
    auto r = run_reduce({"precision", model, "--engine", "opt:fp16", "-j", jobs, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(testing::read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n") << "-j " << jobs;
    const auto report = nlohmann::json::parse(testing::read_bytes(out / "report.json"));
    EXPECT_TRUE(report.at("one_minimal").get<bool>());
    EXPECT_TRUE(report.at("before").at("fails").get<bool>());
    EXPECT_FALSE(report.at("after").at("fails").get<bool>());
    EXPECT_NE(testing::read_bytes(out / "report.md").find("--layerPrecisions=square:fp32,var:fp32,ve:fp32,std:fp32"),
              std::string::npos);
    // The set is real: the model passes with it and fails without its first node.
    EXPECT_EQ(run_reduce({"check", (out / "model.onnx").string(), "--engine",
                          "opt:fp16,fp32=@" + (out / "precision.txt").string()}).exit_code, 0);
    EXPECT_EQ(run_reduce({"check", (out / "model.onnx").string(), "--engine", "opt:fp16,fp32=var+ve+std"}).exit_code, 1);
    // The chart of where error is born, with the square (the node that overflows alone) labelled.
    if (testing::program_in_path("gnuplot")) {
      EXPECT_TRUE(report.at("error_svg").get<bool>());
      EXPECT_NE(testing::read_bytes(out / "error.svg").find("square"), std::string::npos);
      EXPECT_NE(testing::read_bytes(out / "report.md").find("](error.svg)"), std::string::npos);
    }
  }
}

// Polygraphy's `debug precision` keeps a prefix (or suffix) of the topological order in FP32: on the
// same model it needs the 7 nodes up to the Sqrt (or the 6 from the output back to the square).
TEST(PrecisionCli, PolygraphyBaselinesKeepAPrefixOrSuffixInFp32) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  struct Case {
    const char* strategy;
    const char* direction;
    const char* set;
    int checks;
  };
  const Case cases[] = {
      {"polygraphy-linear", "forward", "scaled\nmu\nd\nsquare\nvar\nve\nstd\n", 7},   // K = 1..7
      {"polygraphy-bisect", "forward", "scaled\nmu\nd\nsquare\nvar\nve\nstd\n", 3},   // K = 4, 6, 7
      {"polygraphy-bisect", "reverse", "square\nvar\nve\nstd\nnormed\nY\n", 3},       // K = 4, 6, 5
  };
  for (const auto& c : cases) {
    const auto out = dir / (std::string(c.strategy) + "-" + c.direction);
    auto r = run_reduce({"precision", model, "--engine", "opt:fp16", "--strategy", c.strategy, "--direction", c.direction,
                         "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(testing::read_bytes(out / "precision.txt"), c.set) << c.strategy << " " << c.direction;
    const auto report = nlohmann::json::parse(testing::read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("checks").get<int>(), c.checks) << c.strategy << " " << c.direction;
    EXPECT_FALSE(report.at("one_minimal").get<bool>());
    EXPECT_FALSE(report.at("after").at("fails").get<bool>());
    EXPECT_EQ(run_reduce({"check", (out / "model.onnx").string(), "--engine",
                          "opt:fp16,fp32=@" + (out / "precision.txt").string()}).exit_code, 0);
  }
  auto bad = run_reduce({"precision", model, "--engine", "opt:fp16", "--direction", "sideways"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: --direction: must be forward or reverse, not 'sideways'\n");
  bad = run_reduce({"precision", model, "--engine", "opt:fp16", "--strategy", "ddmin"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("error: --strategy: ", 0), 0u) << bad.err;
}

// Loose to tight: at 0.01 only the overflowing nodes; at 1e-4 FP16's rounding elsewhere counts too,
// so the set grows and includes the loose one. The bundle is the tightest tolerance's set.
TEST(PrecisionCli, ToleranceSweepGivesTheSetAtEachTolerance) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const auto out = dir / "sweep";
  auto r = run_reduce({"precision", model, "--engine", "opt:fp16", "--tolerance-sweep", "1e-4,0.01", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("tolerance 0.01: 4 nodes in FP32"), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("tolerance 0.01:"), r.out.find("tolerance 0.0001:")) << "loose first: " << r.out;
  const auto rows = nlohmann::json::parse(testing::read_bytes(out / "sweep.json"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("fp32_nodes"), nlohmann::json({"square", "var", "ve", "std"}));
  const auto tight = rows[1].at("fp32_nodes").get<std::vector<std::string>>();
  EXPECT_GT(tight.size(), 4u);
  for (const char* n : {"square", "var", "ve", "std"})
    EXPECT_NE(std::find(tight.begin(), tight.end(), n), tight.end()) << n;
  std::string listed;
  for (const auto& n : tight) listed += n + "\n";
  EXPECT_EQ(testing::read_bytes(out / "precision.txt"), listed);
  for (const char* bad : {"0", "-1", "nan", "inf", "0.1,,0.01", "x"}) {
    auto b = run_reduce({"precision", model, "--engine", "opt:fp16", "--tolerance-sweep", bad});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(b.err.rfind("error: --tolerance-sweep: ", 0), 0u) << b.err;
  }
}

TEST(PrecisionCli, UnnamedNodesAreNamedInTheBundlesModel) {
  TempDir dir;
  write_bytes(dir / "norm.onnxtxt", testing::kSquareOverflow);
  const auto out = dir / "bundle";
  auto r = run_reduce({"precision", (dir / "norm.onnxtxt").string(), "--engine", "opt:fp16", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("named 9 unnamed nodes"), std::string::npos) << r.out;
  EXPECT_EQ(run_reduce({"check", (out / "model.onnx").string(), "--engine",
                        "opt:fp16,fp32=@" + (out / "precision.txt").string()}).exit_code, 0);
}

// Eight nodes sharing one name: the set used to be "1 of 8 nodes" (that name pins all 8). Now each
// node has a name of its own, and the set is the four that must stay in FP32.
TEST(PrecisionCli, ADuplicateNameNamesOneNodeInTheSet) {
  TempDir dir;
  auto m = parse_model_text(testing::kSquareOverflow);
  ASSERT_TRUE(m.ok());
  for (Node& n : m->graph.nodes) n.name = "layer";
  ASSERT_TRUE(save_model(*m, dir / "same.onnx").ok());
  const auto out = dir / "bundle";
  auto r = run_reduce({"precision", (dir / "same.onnx").string(), "--engine", "opt:fp16", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Renamed as the model loads, for every command (reports, sets and reproducers alike).
  EXPECT_NE(r.err.find("8 nodes have a name an earlier node has; they are renamed NAME_K"), std::string::npos) << r.err;
  const std::string set = testing::read_bytes(out / "precision.txt");
  EXPECT_EQ(std::count(set.begin(), set.end(), '\n'), 4) << set;
  // And said so in the report.
  EXPECT_EQ(nlohmann::json::parse(testing::read_bytes(out / "report.json")).at("renamed_nodes"), 8);
  EXPECT_NE(testing::read_bytes(out / "report.md").find("8 node(s) that had an earlier node's name"), std::string::npos);
  auto bundle = load_model(out / "model.onnx");
  ASSERT_TRUE(bundle.ok());
  std::set<std::string> names;
  for (const Node& n : bundle->graph.nodes) names.insert(n.name);
  EXPECT_EQ(names.size(), bundle->graph.nodes.size());
  EXPECT_EQ(run_reduce({"check", (out / "model.onnx").string(), "--engine",
                        "opt:fp16,fp32=@" + (out / "precision.txt").string()}).exit_code, 0);
  // `reduce` too: its reproducer's nodes have names of their own.
  auto reduced = run_reduce({(dir / "same.onnx").string(), "--engine", "opt:fp16", "-o", (dir / "reduced").string()});
  ASSERT_EQ(reduced.exit_code, 8) << reduced.out << reduced.err;  // FP16 rounding
  EXPECT_EQ(nlohmann::json::parse(testing::read_bytes(dir / "reduced" / "report.json")).at("renamed_nodes"), 8);
  EXPECT_NE(testing::read_bytes(dir / "reduced" / "report.md").find("**Renamed:** 8 node(s)"), std::string::npos);
  auto reproducer = load_model(dir / "reduced" / "model.onnx");
  ASSERT_TRUE(reproducer.ok());
  std::set<std::string> kept;
  for (const Node& n : reproducer->graph.nodes) kept.insert(n.name);
  EXPECT_EQ(kept.size(), reproducer->graph.nodes.size());
}

TEST(PrecisionCli, AModelThatDoesNotFailOrFailsEvenInFp32HasItsOwnExitCode) {
  TempDir dir;
  const std::string norm = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  auto passes = run_reduce({"precision", norm, "--engine", "opt:fp16", "--atol", "1e6", "--rtol", "1e6"});
  // Non-finite values fail whatever the tolerance: the tanh of the row hides them here, so it passes.
  EXPECT_EQ(passes.exit_code, 3) << passes.out << passes.err;
  EXPECT_NE(passes.out.find("does not fail"), std::string::npos);
  const std::string broadcast = testing::save_named_model(dir, testing::kBroadcastChain, "broadcast.onnx");
  auto kernel_bug = run_reduce({"precision", broadcast, "--engine", "opt:fp16,fault=broadcast-batch1"});
  EXPECT_EQ(kernel_bug.exit_code, 4) << kernel_bug.out << kernel_bug.err;
  EXPECT_NE(kernel_bug.out.find("fails even in FP32: not a precision problem"), std::string::npos);
}

TEST(PrecisionCli, BadInputIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  auto no_precision = run_reduce({"precision", model, "--engine", "ref"});
  EXPECT_EQ(no_precision.exit_code, 2);
  EXPECT_NE(no_precision.err.find("takes no per-node precision"), std::string::npos) << no_precision.err;
  auto jobs = run_reduce({"precision", model, "--engine", "opt:fp16", "-j", "-1"});  // 0: the cores, as every -j
  EXPECT_EQ(jobs.exit_code, 2);
  write_bytes(dir / "notes.txt", "mine");
  auto folder = run_reduce({"precision", model, "--engine", "opt:fp16", "-o", dir.path().string()});
  EXPECT_EQ(folder.exit_code, 2) << folder.out;
  for (const auto* r : {&no_precision, &jobs, &folder})
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
}

}  // namespace
}  // namespace reduce
