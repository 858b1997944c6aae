// Mixed precision at the ONNX level: an FP32 model converted to FP16 or BF16 with a keep set of nodes
// left in FP32, as TensorRT 11 (strongly typed) wants it: the precision is in the graph.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce {

struct MixedPrecisionOptions {
  DType to = DType::Float16;               // Float16 or BFloat16
  std::set<std::string, std::less<>> keep_nodes;     // node names left in FP32
  std::set<std::string, std::less<>> keep_op_types;  // op types left in FP32
  // Graph inputs and outputs keep their FP32 type (AutoCast's --keep_io_types); otherwise a float
  // input that only converted nodes read, and an output a converted node writes, change type too.
  bool keep_io_types = true;
  // Gives a weight in the low type (default: converted here, a new tensor each time); an engine that
  // converts many candidates of one model shares the conversions of the weights they share.
  std::function<Expected<Tensor>(const Tensor& weight, DType to)> convert_weight;
};

// `weight` (float) converted to `to` (float16 or bfloat16), rounding to nearest even.
Expected<Tensor> to_low_precision(const Tensor& weight, DType to);

struct MixedPrecisionModel {
  Model model;
  size_t converted_nodes = 0;         // nodes that compute in the low type
  size_t casts = 0;                   // Cast nodes inserted at the boundaries
  size_t converted_initializers = 0;  // weights stored in the low type
  // Float nodes of the main graph left in FP32 although not asked: no low type in their schema
  // (or no schema this ONNX library knows), subgraph bodies (If/Loop/Scan stay in FP32 whole), or
  // an output type set by an attribute (Cast, ConstantOfShape, ...). Names, in node order.
  std::vector<std::string> kept_by_rule;
};

// Converts `model` (IR, opsets and names kept): every node of the default domain that reads or
// writes float tensors and whose schema allows the low type at those positions computes in it,
// unless kept; a position the schema fixes to float (Resize's scales) stays float. A value is
// cast where its producer's type and a reader's differ, once per value and type (no Cast pairs);
// a value the model's outputs or a subgraph body read by name keeps its name and type, the low
// one being renamed. Initializers and Constant values only converted nodes read are stored in
// the low type. Errors: `to` is not a low float type, a kept node name the model lacks.
Expected<MixedPrecisionModel> convert_to_mixed_precision(const Model& model, const MixedPrecisionOptions& options);

}  // namespace reduce
