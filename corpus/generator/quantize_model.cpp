// Making a corpus model explicitly quantized, exactly except at its sensitive nodes.
#include "quantize_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>

#include "core/narrow_types.h"

namespace reduce::corpus {

namespace {

Tensor tensor_of(DType t, Shape shape, const std::vector<uint8_t>& bytes) {
  auto made = Tensor::copy_of(t, std::move(shape), std::as_bytes(std::span<const uint8_t>(bytes)));
  assert(made.ok());
  return std::move(made).value();
}

Tensor floats(Shape shape, const std::vector<float>& values) {
  auto made = Tensor::from_vector(DType::Float, std::move(shape), values);
  assert(made.ok());
  return std::move(made).value();
}

// A weight's quantized form: the stored elements, scale(s) and zero point(s), and the DQ's axis.
struct QuantizedWeight {
  Tensor q, scale, zero_point;  // zero_point empty: none (float8)
  int64_t axis = -1;            // per channel; -1 per tensor
};

int8_t to_int8(double v) { return static_cast<int8_t>(std::clamp(std::nearbyint(v), -127.0, 127.0)); }

// INT8, symmetric; per output channel (axis 1 of a [K, N] MatMul weight) unless `per_tensor`. With
// `snap`, `w` becomes exactly what the DequantizeLinear gives back.
QuantizedWeight int8_weight(Tensor& w, bool per_tensor, bool snap) {
  const int64_t k = w.shape().at(0), n = w.shape().at(1);
  auto values = w.mutable_data<float>();
  std::vector<float> scales(per_tensor ? 1 : static_cast<size_t>(n), 0.0f);
  for (int64_t i = 0; i < k * n; ++i) {
    float& s = scales[per_tensor ? 0 : static_cast<size_t>(i % n)];
    s = std::max(s, std::fabs(values[i]) / 127.0f);
  }
  for (float& s : scales)
    if (s == 0) s = 1;
  std::vector<uint8_t> q(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k * n; ++i) {
    const float s = scales[per_tensor ? 0 : static_cast<size_t>(i % n)];
    const int8_t v = to_int8(values[i] / s);
    q[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
    if (snap) values[i] = static_cast<float>(v) * s;
  }
  QuantizedWeight out;
  out.q = tensor_of(DType::Int8, w.shape(), q);
  const Shape scale_shape = per_tensor ? Shape{} : Shape{n};
  out.scale = floats(scale_shape, scales);
  out.zero_point = tensor_of(DType::Int8, scale_shape, std::vector<uint8_t>(scales.size(), 0));
  out.axis = per_tensor ? -1 : 1;
  return out;
}

// FP8 E4M3FN per tensor (scale max|w| / 448), `w` snapped to what the DequantizeLinear gives back.
QuantizedWeight fp8_weight(Tensor& w) {
  auto values = w.mutable_data<float>();
  float s = 0;
  for (float v : values) s = std::max(s, std::fabs(v) / 448.0f);
  if (s == 0) s = 1;
  std::vector<uint8_t> q(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    q[i] = narrow_float_from_double(DType::Float8E4M3FN, values[i] / s, true);
    values[i] = static_cast<float>(narrow_to_double(DType::Float8E4M3FN, q[i])) * s;
  }
  return {tensor_of(DType::Float8E4M3FN, w.shape(), q), floats({}, {s}), Tensor{}, -1};
}

Attribute axis_attribute(int64_t axis) {
  Attribute a;
  a.name = "axis";
  a.kind = Attribute::Kind::Int;
  a.i = axis;
  return a;
}

}  // namespace

Model quantize_model(Model& float_model, const std::vector<size_t>& sensitive, QuantizeScheme scheme) {
  Graph& fg = float_model.graph;
  Model out = float_model;
  out.graph.nodes.clear();
  if (scheme == QuantizeScheme::Fp8Saturation) out.ir_version = std::max<int64_t>(out.ir_version, 9);  // float8 types
  const std::set<size_t> marked(sensitive.begin(), sensitive.end());
  auto add_initializer = [&](const std::string& name, Tensor t) { out.graph.initializers.push_back({name, std::move(t), {}}); };
  for (size_t i = 0; i < fg.nodes.size(); ++i) {
    Node node = fg.nodes[i];
    const bool is_sensitive = marked.count(i) > 0;
    Initializer* w = nullptr;  // the float weight this MatMul reads
    if (node.op_type == "MatMul" && node.inputs.size() == 2)
      for (auto& init : fg.initializers)
        if (init.name == node.inputs[1] && init.tensor.dtype() == DType::Float && init.tensor.rank() == 2) w = &init;
    if (w) {
      // The float model's weight is snapped in place: the quantized model's DequantizeLinear gives it back.
      const QuantizedWeight qw = scheme == QuantizeScheme::Fp8Saturation
                                     ? fp8_weight(w->tensor)
                                     : int8_weight(w->tensor, is_sensitive, !is_sensitive);
      const std::string base = w->name + "/" + node.name;
      add_initializer(base + "_quantized", qw.q);
      add_initializer(base + "_scale", qw.scale);
      Node dq{base + "_DequantizeLinear", "DequantizeLinear", "", {base + "_quantized", base + "_scale"}, {base + "_dequantized"}, {}, {}, {}};
      if (!qw.zero_point.empty()) {
        add_initializer(base + "_zero_point", qw.zero_point);
        dq.inputs.push_back(base + "_zero_point");
      }
      if (qw.axis >= 0) dq.attributes.push_back(axis_attribute(qw.axis));
      out.graph.nodes.push_back(std::move(dq));
      node.inputs[1] = base + "_dequantized";
    }
    if (w && is_sensitive && scheme == QuantizeScheme::Fp8Saturation) {
      // The input in E4M3 with scale 1: saturating at 448.
      const std::string base = node.inputs[0] + "/" + node.name;
      add_initializer(base + "_scale", floats({}, {1.0f}));
      add_initializer(base + "_zero_point", tensor_of(DType::Float8E4M3FN, {}, {0}));
      out.graph.nodes.push_back(Node{base + "_QuantizeLinear", "QuantizeLinear", "", {node.inputs[0], base + "_scale", base + "_zero_point"},
                                     {base + "_quantized"}, {}, {}, {}});
      out.graph.nodes.push_back(Node{base + "_DequantizeLinear", "DequantizeLinear", "", {base + "_quantized", base + "_scale", base + "_zero_point"},
                                     {base + "_dequantized"}, {}, {}, {}});
      node.inputs[0] = base + "_dequantized";
    }
    out.graph.nodes.push_back(std::move(node));
  }
  // The snapped weights: the quantized model keeps none of the float ones it no longer reads.
  std::set<std::string> read;
  for (const auto& n : out.graph.nodes) read.insert(n.inputs.begin(), n.inputs.end());
  std::erase_if(out.graph.initializers, [&](const Initializer& init) { return !read.count(init.name); });
  return out;
}

}  // namespace reduce::corpus
