// Large activations: a reduction of a model whose values are large keeps them in the spill file,
// not the heap. Its values held at once (report.json "memory", the reduction's own MemoryLedger)
// stay within a few activations per slot, and it still reaches the one-node reproducer.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/model_io.h"
#include "large_chain.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;

TEST(LargeActivations, AReductionHoldsAFewActivationsPerSlotAndSpillsTheRecordedValues) {
  TempDir dir;
  const auto model = dir.path() / "chain.onnx";
  // 64 nodes over [1,4,256,256] floats: 1 MiB per value, 64 MiB of values in all.
  ASSERT_TRUE(save_model(corpus::large_activation_chain(64, 4, 256), model).ok());
  const uint64_t activation = 4 * 256 * 256 * sizeof(float);
  const auto out = dir.path() / "out";
  auto r = run_reduce({model.string(), "--engine", "opt:fault=broadcast-batch1", "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report["reduced"]["nodes"], 1) << report.dump(2);
  EXPECT_TRUE(report["one_minimal"].get<bool>());
  const auto& memory = report["memory"];
  // Every activation went to the spill file; in memory stay the model's input and the gate's two
  // [1,1,256,256] values (a quarter of an activation each, under the 1 MiB spill size).
  EXPECT_GE(memory["recorded_spilled_bytes"].get<uint64_t>(), 60 * activation);
  EXPECT_EQ(memory["recorded_in_memory_bytes"].get<uint64_t>(), activation + activation / 2);
  // Two slots, each holding at most three activations at once (a node's input and output, and the
  // value being handed over), the input, and the outputs kept for the bundle (at most 16 MiB; none
  // here, as every failing candidate's outputs are activations themselves and few are kept).
  const uint64_t peak = memory["peak_held_bytes"].get<uint64_t>();
  EXPECT_GT(peak, 0u);
  EXPECT_LE(peak, (1 + 2 * 3) * activation + (uint64_t{16} << 20)) << memory.dump();
}

}  // namespace
}  // namespace reduce
