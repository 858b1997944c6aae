// error.svg: drawn by gnuplot from data files; node names are data, never gnuplot commands.
#include <gtest/gtest.h>

#include <limits>

#include "oracle/error_chart.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::TempDir;

bool gnuplot_installed() { return testing::program_in_path("gnuplot"); }

// Two nodes: the first (with a hostile name) is where a non-finite value is born.
struct Sample {
  Graph graph;
  ErrorOrigin origin;
};

Sample sample(const std::string& culprit_name) {
  Sample s;
  Node a, b;
  a.name = culprit_name;
  a.op_type = "Mul";
  a.inputs = {"x", "x"};
  a.outputs = {"sq"};
  b.op_type = "Sqrt";
  b.inputs = {"sq"};
  b.outputs = {"y"};
  s.graph.nodes = {a, b};
  ValueError sq, y;
  sq.node = 0;
  sq.value = "sq";
  sq.accumulated.passed = false;
  sq.accumulated.nonfinite_new = 3;
  sq.local = sq.accumulated;
  y.node = 1;
  y.value = "y";
  y.accumulated.passed = false;
  y.accumulated.ratio = 40;
  y.local = OutputComparison{};
  y.local->ratio = 0.01;
  s.origin.values = {sq, y};
  s.origin.nonfinite_born = 0;
  s.origin.top_local = {0};
  s.origin.worst_output = 1;
  s.origin.sources = {0};
  return s;
}

TEST(ErrorChart, LabelsTheCulpritWithAHostileNameAsPlainText) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox, scripts/setup.sh): no chart to check";
  TempDir dir;
  const auto s = sample("evil\"name\\`touch pwned`\n@x");
  OutputValues out{"y", Tensor::from_vector(DType::Float, {3}, std::vector<float>{1, 2, 3}).value(),
                   Tensor::from_vector(DType::Float, {3}, std::vector<float>{0, 0, std::numeric_limits<float>::infinity()}).value()};
  auto drawn = write_error_chart({dir / "error.svg"}, s.origin, s.graph, out);
  ASSERT_TRUE(drawn.ok()) << drawn.error().message();
  ASSERT_EQ(drawn->outcome, ChartOutcome::Drawn) << drawn->note;
  const std::string svg = read_bytes(dir / "error.svg");
  EXPECT_NE(svg.find("evil'name/`touch pwned` @x (Mul)"), std::string::npos) << "label as data, quotes replaced";
  EXPECT_NE(svg.find("engine 1)"), std::string::npos) << "the histogram counts the engine's Inf";
  EXPECT_FALSE(std::filesystem::exists("pwned"));
  EXPECT_FALSE(std::filesystem::exists(dir / "pwned"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u) << "only error.svg: the data and the script are removed";
}

TEST(ErrorChart, AFolderThatCannotHoldTheChartIsAnErrorNamingIt) {
  TempDir dir;
  const auto s = sample("n");
  auto drawn = write_error_chart({dir / "missing" / "error.svg"}, s.origin, s.graph, std::nullopt);
  ASSERT_FALSE(drawn.ok());
  EXPECT_EQ(drawn.error().where, (dir / "missing" / "error.svg").string());
  EXPECT_FALSE(check_chart_path(dir.path()).ok()) << "a folder is not a chart file";
  EXPECT_TRUE(check_chart_path(dir / "error.svg").ok());
}

}  // namespace
}  // namespace reduce
