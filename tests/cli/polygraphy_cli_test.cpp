// Polygraphy JSON files from the CLI: `--inputs FILE.json` is one sample per iteration,
// `reduce run --save-format polygraphy` writes files Polygraphy reads, a bad file is exit 2;
// `--expected FILE.json` takes Polygraphy's saved outputs as the reference values.
#include <gtest/gtest.h>

#include "core/model_io.h"
#include "core/polygraphy_json.h"
#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_reduce;
using testing::TempDir;

const fs::path kFixtures = fs::path(REDUCE_SHARED_FIXTURES) / "polygraphy";

TEST(PolygraphyCli, RunReadsEachIterationAndWritesPolygraphysFormatsBack) {
  TempDir dir;
  auto r = run_reduce({"run", (kFixtures / "two_inputs.onnx").string(), "--inputs",
                       (kFixtures / "two_inputs_inputs.json").string(), "--save-format", "polygraphy", "--save-inputs",
                       (dir / "in.json").string(), "--save-outputs", (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sample #1: " + (kFixtures / "two_inputs_inputs.json").string() + " iteration 1"), std::string::npos)
      << r.out;
  // The outputs ONNX Runtime gave under Polygraphy, against ours written as RunResults.
  auto theirs = read_polygraphy_json(kFixtures / "two_inputs_outputs.json");
  auto ours = read_polygraphy_json(dir / "out.json");
  ASSERT_TRUE(theirs.ok() && ours.ok());
  ASSERT_EQ(ours->size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ((*ours)[k].tensors.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      EXPECT_EQ((*ours)[k].tensors[o].name, (*theirs)[k].tensors[o].name);
      EXPECT_EQ((*ours)[k].tensors[o].tensor.shape(), (*theirs)[k].tensors[o].tensor.shape());
      EXPECT_EQ((*ours)[k].tensors[o].tensor.element_as_double(4), (*theirs)[k].tensors[o].tensor.element_as_double(4));
    }
  }
  auto inputs = read_polygraphy_json(dir / "in.json");
  ASSERT_TRUE(inputs.ok()) << inputs.error().message();
  EXPECT_EQ(inputs->size(), 2u);
}

TEST(PolygraphyCli, CheckTakesPolygraphyInputs) {
  auto r = run_reduce({"check", (kFixtures / "half.onnx").string(), "--engine", "opt:fp16", "--inputs",
                       (kFixtures / "half_inputs.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // Relu is exact in float16
}

TEST(PolygraphyCli, AMalformedJsonFileIsExit2WithOneLine) {
  TempDir dir;
  testing::write_bytes(dir / "bad.json", "{\"lst\": [");
  for (const char* command : {"run", "check"}) {
    auto r = run_reduce({command, (kFixtures / "half.onnx").string(), "--inputs", (dir / "bad.json").string()});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, "error: " + (dir / "bad.json").string() + ": not valid JSON\n") << command;
  }
  auto r = run_reduce({"run", (kFixtures / "half.onnx").string(), "--save-format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: run: --save-format must be pb, npy, both or polygraphy, not 'xml'\n");
}

// The fixture's outputs file with `delta` added to element 0 of output `name` in every iteration.
void write_changed_outputs(const fs::path& from, const fs::path& to, const std::string& name, float delta) {
  auto iterations = read_polygraphy_json(from);
  ASSERT_TRUE(iterations.ok()) << iterations.error().message();
  std::vector<std::vector<NamedTensor>> changed;
  for (auto& it : *iterations) {
    for (auto& t : it.tensors)
      if (t.name == name) {
        auto copy = Tensor::copy_of(t.tensor.dtype(), t.tensor.shape(), t.tensor.bytes());
        ASSERT_TRUE(copy.ok());
        copy->mutable_data<float>()[0] += delta;
        t.tensor = std::move(*copy);
      }
    changed.push_back(std::move(it.tensors));
  }
  ASSERT_TRUE(write_polygraphy_outputs(to, "onnxrt-runner", changed).ok());
}

TEST(PolygraphyCli, ExpectedValuesFromPolygraphysSavedOutputsReplaceTheReferenceRun) {
  const std::string model = (kFixtures / "two_inputs.onnx").string();
  const std::string inputs = (kFixtures / "two_inputs_inputs.json").string();
  // A reference that cannot run: only the file can give the expected values.
  const std::string broken_reference = "cmd:/bin/false {model} {outputs}";
  auto r = run_reduce({"check", model, "--inputs", inputs, "--expected", (kFixtures / "two_inputs_outputs.json").string(),
                       "--reference", broken_reference});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("expected: " + (kFixtures / "two_inputs_outputs.json").string() +
                       " iteration 0 (every value given; the reference did not run)"),
            std::string::npos)
      << r.out;
  r = run_reduce({"check", model, "--inputs", inputs, "--reference", broken_reference});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("the reference (" + broken_reference + ") cannot run the model"), std::string::npos) << r.err;
}

TEST(PolygraphyCli, AnEngineThatDiffersFromTheExpectedFileFailsOnThatOutputOnly) {
  TempDir dir;
  write_changed_outputs(kFixtures / "two_inputs_outputs.json", dir / "golden.json", "z", 0.5f);
  auto r = run_reduce({"check", (kFixtures / "two_inputs.onnx").string(), "--inputs",
                       (kFixtures / "two_inputs_inputs.json").string(), "--expected", (dir / "golden.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("| y | 6 | 0 | 0 | 0 | 0 | 0 | ok |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| z | 6 | 0.5 |"), std::string::npos) << r.out;
}

TEST(PolygraphyCli, AReductionComparesWithTheSavedOutputsAndWarnsWhereTheReferenceDisagrees) {
  TempDir dir;
  {
    auto m = testing::parse_model(testing::kBroadcastChain);
    ASSERT_TRUE(save_model(m, dir / "chain.onnx").ok());
  }
  // The "golden" run: our reference's outputs saved in Polygraphy's formats.
  auto r = run_reduce({"run", (dir / "chain.onnx").string(), "--save-format", "polygraphy", "--save-inputs",
                       (dir / "in.json").string(), "--save-outputs", (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_reduce({(dir / "chain.onnx").string(), "--inputs", (dir / "in.json").string(), "--expected",
                  (dir / "out.json").string(), "--engine", "opt:fault=broadcast-batch1", "-j", "2", "-o",
                  (dir / "bundle").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("warning:"), std::string::npos) << r.err;
  auto reduced = load_model(dir / "bundle" / "model.onnx");
  ASSERT_TRUE(reduced.ok());
  ASSERT_EQ(reduced->graph.nodes.size(), 1u);
  EXPECT_EQ(reduced->graph.nodes[0].op_type, "Mul");
  const std::string report = testing::read_bytes(dir / "bundle" / "report.json");
  EXPECT_NE(report.find("\"source\": \"" + (dir / "out.json").string() + " iteration 0\""), std::string::npos) << report;
  // The bundle reproduces against the expected values it holds, as report.md says.
  EXPECT_NE(testing::read_bytes(dir / "bundle" / "report.md").find("--inputs inputs --expected expected"), std::string::npos);
  r = run_reduce({"check", (dir / "bundle" / "model.onnx").string(), "--engine", "opt:fault=broadcast-batch1", "--inputs",
                  (dir / "bundle" / "inputs").string(), "--expected", (dir / "bundle" / "expected").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // Saved outputs the reference does not reproduce: said on stderr, naming the value.
  write_changed_outputs(dir / "out.json", dir / "off.json", "Y", 1.0f);
  r = run_reduce({"check", (dir / "chain.onnx").string(), "--inputs", (dir / "in.json").string(), "--expected",
                  (dir / "off.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("warning: " + (dir / "off.json").string() +
                       " iteration 0: the reference (ref) computes 'Y' differently (max abs error 1)"),
            std::string::npos)
      << r.err;
}

TEST(PolygraphyCli, ExpectedFilesThatDoNotFitTheModelOrTheInputsAreExit2WithOneLine) {
  TempDir dir;
  const std::string model = (kFixtures / "half.onnx").string();
  const std::string inputs = (kFixtures / "half_inputs.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::string other = (kFixtures / "two_inputs_outputs.json").string();
  testing::write_bytes(dir / "bad.json", "[1,");
  const std::vector<Case> cases = {
      {{"--expected", (kFixtures / "half_outputs.json").string()},
       "error: --expected: expected values belong to the inputs they were computed from; give those with --inputs\n"},
      {{"--inputs", inputs, "--expected", other}, "error: " + other + " iteration 0: 'y' is not a value computed by a node of the model\n"},
      {{"--inputs", inputs, "--expected", (dir / "bad.json").string()}, "error: " + (dir / "bad.json").string() + ": not valid JSON\n"},
      {{"--inputs", inputs, "--expected", (kFixtures / "half_outputs.json").string(), "--expected",
        (kFixtures / "half_outputs.json").string()},
       "error: --expected gives 4 sample(s) for 2 input sample(s); give one per input sample, in the same order\n"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"check", model};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
  }
}

}  // namespace
}  // namespace reduce
