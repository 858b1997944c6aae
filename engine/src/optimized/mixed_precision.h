// Mixed precision (`opt:fp16,fp32=NODE+NODE`): the plan nodes that run in FP32, and the conversions
// a real engine inserts where FP32 and reduced-precision nodes meet.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "plan_graph.h"
#include "reference/kernel.h"

namespace reduce::opt {

// Op type (in kFusedDomain) of the conversion from an FP32 value to the reduced precision.
inline constexpr const char* kToReducedPrecision = "ToReducedPrecision";
// Op type (in kFusedDomain) of a MatMul that rounds its large weight as it reads it.
inline constexpr const char* kMatMulRoundedWeight = "MatMulRoundedWeight";

struct Fp32Boundaries {
  std::unordered_set<std::string> inputs;   // graph inputs read by FP32 nodes: fed unrounded
  std::unordered_set<std::string> weights;  // initializers kept unrounded (those FP32 nodes read)
};

// After the last pass, under fp16/bf16 with FP32 nodes: FP32 nodes read unrounded weights (a
// twin initializer when reduced-precision nodes share it) and graph inputs; every value an FP32
// node stores that a reduced-precision node reads goes through one ToReducedPrecision node.
// Values a reduced-precision node stores are read by FP32 nodes as they are (widening is exact).
Expected<Fp32Boundaries> insert_precision_boundaries(PlanGraph& g);

// Large weights under fp16/bf16 are rounded at use, not stored rounded: a MatMul reading one of
// `weights` as B (alone, or as the producer of a FusedActivation) becomes a MatMulRoundedWeight,
// which rounds each block as it reads it; any other
// reader reads it through a ToReducedPrecision node of its own, so a rounded copy lives only while
// its reader runs (a model with 1 GiB of weights does not hold a second GiB per prepared
// candidate). Returns the weights this cannot apply to (a requested output, a weight a graph
// input overrides, one read inside a subgraph body): the caller stores those rounded.
std::vector<std::string> round_weights_at_use(PlanGraph& g, const std::vector<std::string>& weights);

// The nodes whose outputs are not rounded: the plan's FP32 nodes with every node of their subgraph
// bodies, and subgraph nodes named in `names`. Pointers into `graph`, which must not change after.
std::unordered_set<const Node*> fp32_nodes_of(const PlanGraph& g, const Fp32Nodes& names);

// The kernel of a ToReducedPrecision node: a copy of its input rounded to `precision`.
ref::KernelPtr make_precision_conversion(Precision precision);

}  // namespace reduce::opt
