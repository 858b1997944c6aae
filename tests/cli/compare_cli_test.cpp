// `reduce compare` tells the error a node adds from the error it inherits, draws the chart, and a
// mismatch bundle says where its error is born.
#include <gtest/gtest.h>

#include <algorithm>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::kSquareOverflow;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

std::string square_overflow_model(const TempDir& dir) {
  write_bytes(dir / "ln.onnxtxt", kSquareOverflow);
  return (dir / "ln.onnxtxt").string();
}

std::vector<std::string> compare_args(const std::string& model) {
  return {"compare", model, "--engine", "opt:fp16", "--input-range", "X:-1,1"};
}

bool gnuplot_installed() { return testing::program_in_path("gnuplot"); }

TEST(CompareCli, NamesTheSquareAsWhereErrorIsBornAndTheNodesAfterItAsInheriting) {
  TempDir dir;
  auto r = run_reduce(compare_args(square_overflow_model(dir)));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("non-finite born at: (unnamed) (Mul), value 'square'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error of output 'Y'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("comes from: (unnamed) (Mul), value 'square' non-finite; the other nodes"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| ReduceMean | var |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inherits (input 'square' beyond the engine's range) |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| Tanh | Y |"), std::string::npos);
  EXPECT_EQ(r.out.find("fusion-dependent"), std::string::npos) << r.out;
}

TEST(CompareCli, TheChartNamesTheCulprit) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox, scripts/setup.sh): no chart to check";
  TempDir dir;
  const auto chart = dir / "error.svg";
  auto args = compare_args(square_overflow_model(dir));
  args.insert(args.end(), {"--chart", chart.string()});
  auto r = run_reduce(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("chart: " + chart.string()), std::string::npos) << r.out;
  const std::string svg = read_bytes(chart);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("square (Mul)"), std::string::npos) << "the culprit is labelled";
  EXPECT_NE(svg.find("Values of output 'Y'"), std::string::npos) << "the histogram of the worst output";
  // Only the picture is left: the data and script files are gone.
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2u);
}

TEST(CompareCli, WithoutGnuplotTheChartIsAOneLineNoteNotAnError) {
  TempDir dir;
  std::filesystem::create_directories(dir / "empty-path");
  const auto chart = dir / "error.svg";
  auto args = compare_args(square_overflow_model(dir));
  args.insert(args.end(), {"--chart", chart.string()});
  args.insert(args.begin(), {"env", "PATH=" + (dir / "empty-path").string(), std::string(REDUCE_BINARY_DIR) + "/reduce"});
  auto r = testing::run_process(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("chart: gnuplot is not installed (Debian: gnuplot-nox); no chart\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_FALSE(std::filesystem::exists(chart));
}

TEST(CompareCli, AnUnwritableChartPathExitsWithTwoBeforeAnyWork) {
  TempDir dir;
  const auto model = square_overflow_model(dir);
  write_bytes(dir / "a-file", "x");
  std::filesystem::create_directories(dir / "a-folder");
  for (const auto& chart : {dir / "no-such-folder" / "error.svg", dir / "a-file" / "error.svg", dir / "a-folder"}) {
    auto args = compare_args(model);
    args.insert(args.end(), {"--chart", chart.string()});
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << chart << ": " << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: " + chart.string() + ": ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing ran: " << r.out;
  }
}

TEST(CompareCli, LocalRunsBoundIsCheckedAndHonoured) {
  TempDir dir;
  auto args = compare_args(square_overflow_model(dir));
  args.insert(args.end(), {"--local-runs", "1"});
  auto r = run_reduce(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("local error: 1 nodes run alone on the engine, 8 not run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("non-finite born at: (unnamed) (Mul), value 'square'"), std::string::npos) << r.out;
  args.back() = "-1";
  auto bad = run_reduce(args);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("error: --local-runs: ", 0), 0u) << bad.err;
}

TEST(ReduceCli, AMismatchBundleSaysWhereItsErrorIsBorn) {
  TempDir dir;
  const auto out = dir / "bundle";
  auto r = run_reduce({square_overflow_model(dir), "--engine", "opt:fp16", "--input-range", "X:-1,1", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 8) << r.out << r.err;  // the exact FP16 reference overflows alike: rounding, said by exit 8
  const std::string md = read_bytes(out / "report.md");
  EXPECT_NE(md.find("## Where error is born (original model)"), std::string::npos) << md;
  EXPECT_NE(md.find("non-finite born at: (unnamed) (Mul), value 'square'"), std::string::npos) << md;
  const std::string json = read_bytes(out / "report.json");
  EXPECT_NE(json.find("\"error_sources\": [\n    {\n      \"node\": \"\",\n      \"op_type\": \"Mul\",\n      \"value\": \"square\""),
            std::string::npos) << json;
  EXPECT_EQ(std::filesystem::exists(out / "error.svg"), gnuplot_installed());
  EXPECT_EQ(std::filesystem::exists(out / "error.png"), gnuplot_installed()) << "GitHub issues take PNG";
  if (gnuplot_installed()) {
    EXPECT_NE(md.find("![error per node and output values](error.png) ([SVG](error.svg))"), std::string::npos) << md;
  }
}

}  // namespace
}  // namespace reduce
