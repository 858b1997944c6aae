// `reduce check --diagnose`: the variant table and what the failure depends on.
#include <gtest/gtest.h>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

TEST(DiagnoseCli, PrintsOneLinePerVariantAndWhatTheFailureDependsOn) {
  TempDir dir;
  write_bytes(dir / "bb.onnxtxt", testing::kBroadcastChain);
  auto r = run_reduce({"check", (dir / "bb.onnxtxt").string(), "--engine", "opt:fault=broadcast-batch1", "--diagnose"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* dependency : {"| precision | ", "| fusion | ", "| input binding | ", "| static batch | ", "| batch 1 | ",
                                 "| input range | "})
    EXPECT_NE(r.out.find(dependency), std::string::npos) << dependency << "\n" << r.out;
  EXPECT_NE(r.out.find("| precision | every float node in FP32 | n/a: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("depends on: static batch, batch 1\n"), std::string::npos) << r.out;
}

TEST(DiagnoseCli, APassingModelHasNothingToDiagnose) {
  TempDir dir;
  write_bytes(dir / "bb.onnxtxt", testing::kBroadcastChain);
  auto r = run_reduce({"check", (dir / "bb.onnxtxt").string(), "--engine", "opt", "--diagnose"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing to diagnose"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace reduce
