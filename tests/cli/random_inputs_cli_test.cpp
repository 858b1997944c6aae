// Models whose inputs cannot be random, and models without inputs (issue 72): the input is named
// with why and what to pass (exit 2), indices are made within the axis they index, and a model of
// constants alone gets a verdict like any other.
#include <gtest/gtest.h>

#include "process_support.h"

namespace reduce {
namespace {

using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Random inputs that cannot be (issue 72): an input without a shape, an integer read as a shape, and
// indices, which are made within the axis they index.
TEST(RandomInputs, AnInputWithoutAShapeIsNamedWithWhatToPass) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[] q, float[2,2] k) => (float[2,2] y) {
  y = MatMul (q, k)
})");
  auto r = run_reduce({"check", (dir / "m.onnxtxt").string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "input 'q' (")) << r.err;
  EXPECT_TRUE(has(r.err, ") declares no shape, so random values for it would be a scalar")) << r.err;
  EXPECT_TRUE(has(r.err, "--input-shape q:DIMS")) << r.err;
}

TEST(RandomInputs, AnIntegerReadAsAShapeIsRefused) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,1] x, int64[2] new_shape) => (float[2,3] y) {
  y = Expand (x, new_shape)
})");
  auto r = run_reduce({"check", (dir / "m.onnxtxt").string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "input 'new_shape' (int64[2]): Expand")) << r.err;
  EXPECT_TRUE(has(r.err, "reads it as its shape")) << r.err;
}

TEST(RandomInputs, IndicesAreMadeWithinTheAxisTheyIndex) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2] x, int64[20] idx) => (float[20,2] y) {
  y = Gather <axis = 0> (x, idx)
})");
  auto r = run_reduce({"check", (dir / "m.onnxtxt").string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "input 'idx': random values in [0, 2]")) << r.err;
}

TEST(ConstantOnlyModels, CheckAndRunGiveAVerdict) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 13]>
g () => (float[2] y) {
  y = Constant <value = float[2] {1.5, -2}> ()
})");
  auto check = run_reduce({"check", (dir / "m.onnxtxt").string(), "--engine", "opt"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_TRUE(has(check.out, "verdict: PASS")) << check.out;
  auto run = run_reduce({"run", (dir / "m.onnxtxt").string()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

}  // namespace
}  // namespace reduce
