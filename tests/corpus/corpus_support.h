// Helpers for the corpus tests: generating families, seeded inputs, and reference runs that record
// every value (as the oracle feeds cut values of a candidate).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "corpus_model.h"
#include "engine/engine.h"
#include "oracle/inputs.h"

namespace reduce::testing {

// The fault table's ground truth (issue 4; attention-op: issue 21; the export-shaped families: issue 48),
// as the manifest must state it.
inline const std::map<std::string, std::string, std::less<>> kMinimalOps = {
    {"broadcast-batch1", "Mul:1"},
    {"attention-unstable-softmax", "MatMul:2,Mul:1,Softmax:1"},
    {"layernorm-drop-eps", "Add:1,Div:1,Pow:1,ReduceMean:2,Sqrt:1,Sub:1"},
    {"conv-bn-fold-eps", "BatchNormalization:1,Conv:1"},
    {"cast-fp16-conflict", "Cast:1"},
    {"resize-half-pixel", "Resize:1"},
    {"input-binding-order", "Sub:1"},
    {"fp16-overflow", "ReduceSum:1"},
    {"attention-op", "Attention:1"},
    {"bert-layernorm-eps", "Add:1,Div:1,Pow:1,ReduceMean:2,Sqrt:1,Sub:1"},
    {"ppocr-depthwise-bn-eps", "BatchNormalization:1,Conv:1"},
    {"unet-resize-half-pixel", "Resize:1"},
};

inline const corpus::Family& family(std::string_view fault) {
  const corpus::Family* f = corpus::find_family(fault);
  if (!f) ADD_FAILURE() << "no corpus family " << fault;
  return f ? *f : corpus::families().front();
}

// The inputs the oracle would make by default: floats uniform in [-1, 1), seed 0.
inline TensorMap seeded_inputs(const Model& model) {
  TensorMap in;
  auto made = make_random_inputs(model.graph, {});
  EXPECT_TRUE(made.ok()) << made.error().message();
  if (made.ok())
    for (auto& t : *made) in.emplace(t.name, std::move(t.tensor));
  return in;
}

// Every node output of the model (and the graph outputs), computed by the reference.
inline TensorMap record_reference(const Model& model, const TensorMap& inputs) {
  RunOptions options;
  for (const auto& n : model.graph.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) options.outputs.push_back(o);
  auto prepared = make_reference_engine(1)->prepare(model);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  auto out = (*prepared)->run(inputs, options);
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? std::move(out).value() : TensorMap{};
}

inline bool all_finite(const Tensor& t) {
  for (float v : t.data<float>())
    if (!std::isfinite(v)) return false;
  return true;
}

inline float max_abs(const Tensor& t) {
  float m = 0;
  for (float v : t.data<float>()) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace reduce::testing
