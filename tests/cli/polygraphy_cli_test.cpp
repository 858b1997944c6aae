// Polygraphy JSON files from the CLI: `--inputs FILE.json` is one sample per iteration,
// `reduce run --save-format polygraphy` writes files Polygraphy reads, a bad file is exit 2.
#include <gtest/gtest.h>

#include "core/polygraphy_json.h"
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

}  // namespace
}  // namespace reduce
