// `fp32=` node sets end to end: `reduce check` and `reduce run` with nodes kept in FP32, bad sets.
#include <gtest/gtest.h>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;


std::string write_named_model(const TempDir& dir) { return testing::save_named_model(dir, testing::kSquareNorm, "norm.onnx"); }

TEST(Fp32NodesCli, AnFp16OverflowFailsAndPassesWithItsNodesKeptInFp32) {
  TempDir dir;
  const std::string model = write_named_model(dir);
  auto fails = run_reduce({"check", model, "--engine", "opt:fp16"});
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  auto passes = run_reduce({"check", model, "--engine", "opt:fp16,fp32=sq+var+std"});
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  write_bytes(dir / "pins.txt", "sq\nvar\nstd\n");
  auto from_file = run_reduce({"check", model, "--engine", "opt:fp16,fp32=@" + (dir / "pins.txt").string()});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.out << from_file.err;
  auto bf16 = run_reduce({"check", model, "--engine", "opt:bf16,fp32=sq+var+std"});
  EXPECT_EQ(bf16.exit_code, 0) << bf16.out << bf16.err;
}

TEST(Fp32NodesCli, KeepingOnlyTheSquareIsNotEnoughBecauseItsReaderGetsItRounded) {
  TempDir dir;
  const std::string model = write_named_model(dir);
  auto r = run_reduce({"check", model, "--engine", "opt:fp16,fp32=sq"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST(Fp32NodesCli, UnknownNodesEmptyAndMissingFilesExitTwoWithOneLine) {
  TempDir dir;
  const std::string model = write_named_model(dir);
  write_bytes(dir / "empty.txt", "\n");
  write_bytes(dir / "typo.txt", "sq\nsqq\n");
  const std::string empty = (dir / "empty.txt").string(), typo = (dir / "typo.txt").string(),
                    missing = (dir / "missing.txt").string();
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const Case cases[] = {
      {{"check", model, "--engine", "opt:fp16,fp32=sq+nope"}, "'nope'"},
      {{"check", model, "--engine", "opt:fp16,fp32=@" + typo}, typo},
      {{"check", model, "--engine", "opt:fp16,fp32=@" + empty}, empty},
      {{"check", model, "--engine", "opt:fp16,fp32=@" + missing}, missing},
      {{"run", model, "--engine", "opt:fp16,fp32=nope"}, "'nope'"},
      {{model, "--engine", "opt:fp16,fp32=nope", "-o", (dir / "out").string()}, "'nope'"},
  };
  for (const auto& c : cases) {
    auto r = run_reduce(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[3] << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace reduce
