// Helpers of the operator tests: build tensors and one-node models, run text models on the
// reference engine, check values, errors and thread-count independence.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce::op_test {

// -- tensors

template <typename T>
Tensor tensor(DType dtype, Shape shape, std::vector<T> v) {
  return Tensor::from_vector(dtype, std::move(shape), v).value();
}
inline Tensor floats(Shape shape, std::vector<float> v) { return tensor(DType::Float, std::move(shape), std::move(v)); }
inline Tensor int64s(Shape shape, std::vector<int64_t> v) { return tensor(DType::Int64, std::move(shape), std::move(v)); }
inline Tensor bools(Shape shape, std::vector<bool> v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  return Tensor::copy_of(DType::Bool, std::move(shape), std::as_bytes(std::span(bytes))).value();
}
// Float16 elements holding `v` rounded once.
inline Tensor halves(Shape shape, std::vector<float> v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(float_to_half(f));
  return tensor(DType::Float16, std::move(shape), std::move(h));
}
// Elements of a type stored one byte each (the narrow types), given as their stored bytes.
inline Tensor bytes_of(DType t, Shape shape, std::vector<uint8_t> v) { return tensor(t, std::move(shape), std::move(v)); }
// 0, 1, 2, ... in row-major order.
inline Tensor iota_floats(Shape shape) {
  std::vector<float> v(element_count(shape).value());
  std::iota(v.begin(), v.end(), 0.0f);
  return floats(std::move(shape), v);
}
// Seeded uniform values in [lo, hi).
inline Tensor random_floats(Shape shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(element_count(shape).value()));
  for (float& x : v) x = dist(rng);
  return floats(std::move(shape), v);
}
// Seeded normal values (mean 0.5, deviation 3): both signs, some large.
inline Tensor normal_floats(Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.5f, 3.0f);
  std::vector<float> v(static_cast<size_t>(element_count(shape).value()));
  for (auto& x : v) x = dist(gen);
  return floats(std::move(shape), v);
}
// A deterministic, irregular float pattern for determinism tests.
inline std::vector<float> pattern(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 3.0);
  return v;
}

template <typename T = float>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}
inline std::vector<float> half_values(const Tensor& t) {
  std::vector<float> v;
  for (uint16_t h : t.data<uint16_t>()) v.push_back(half_to_float(h));
  return v;
}
// The stored bytes of a one-byte-per-element tensor, and its elements as doubles.
inline std::vector<uint8_t> stored(const Tensor& t) { return values<uint8_t>(t); }
inline std::vector<double> decoded(const Tensor& t) {
  std::vector<double> out;
  for (uint64_t i = 0; i < t.elements(); ++i) out.push_back(t.element_as_double(i));
  return out;
}

// -- models

inline Attribute int_attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
inline Attribute string_attr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::String;
  a.s = v;
  return a;
}

// A one-node model of `op` at `opset` with inputs X0..X(n-1) (`dtype`[2, 3]) and output Z. Ops
// whose kernel cannot be made without an attribute get it, set to 1 (GroupNormalization's
// num_groups, LinearAttention's head counts).
inline Model one_node(const std::string& op, int64_t opset, size_t inputs, DType dtype = DType::Float) {
  Model m;
  m.opset_imports.push_back({"", opset});
  Node n;
  n.name = "n0";
  n.op_type = op;
  for (size_t k = 0; k < inputs; ++k) {
    n.inputs.push_back("X" + std::to_string(k));
    m.graph.inputs.push_back({n.inputs.back(), ValueType::tensor(dtype, {2, 3}), {}});
  }
  std::vector<const char*> ones;
  if (op == "GroupNormalization") ones = {"num_groups"};
  if (op == "LinearAttention") ones = {"q_num_heads", "kv_num_heads"};
  for (const char* name : ones) n.attributes.push_back(int_attr(name, 1));
  n.outputs = {"Z"};
  m.graph.outputs.push_back({"Z", {}, {}});
  m.graph.nodes.push_back(std::move(n));
  return m;
}

// A one-node model of `op` (opset `opset`) reading the graph inputs `inputs` (typed as the tensors
// are) and writing Y: built in code, for the types ONNX 1.12's text parser has no names for.
inline Model node_model(const std::string& op, int64_t opset, const std::vector<std::pair<std::string, Tensor>>& inputs,
                        std::vector<Attribute> attributes) {
  Model m;
  m.ir_version = 10;
  m.opset_imports.push_back({"", opset});
  Node n;
  n.name = "n0";
  n.op_type = op;
  for (const auto& [name, t] : inputs) {
    n.inputs.push_back(name);
    m.graph.inputs.push_back({name, ValueType::tensor(t.dtype(), t.shape()), {}});
  }
  n.outputs = {"Y"};
  n.attributes = std::move(attributes);
  m.graph.nodes.push_back(std::move(n));
  m.graph.outputs.push_back({"Y", {}, {}});
  return m;
}

// -- runs

// Runs a model (preparing and running both may fail) and returns the requested outputs.
inline Expected<TensorMap> run(const std::string& text, const TensorMap& inputs,
                               std::vector<std::string> outputs = {"Y"}, int threads = 0) {
  Model m = testing::parse_model(text);
  REDUCE_ASSIGN(auto prepared, make_reference_engine(threads)->prepare(m));
  RunOptions options;
  options.outputs = std::move(outputs);
  return prepared->run(inputs, options);
}

// Runs a model and returns every graph output.
inline Expected<TensorMap> run_model(const Model& m, const TensorMap& inputs, int threads) {
  REDUCE_ASSIGN(auto prepared, make_reference_engine(threads)->prepare(m));
  return prepared->run(inputs);
}
inline Expected<TensorMap> run_all(const std::string& text, const TensorMap& inputs, int threads = 0) {
  return run_model(testing::parse_model(text), inputs, threads);
}

// Runs a model for one output.
inline Expected<Tensor> run_one(const std::string& text, const TensorMap& inputs, const std::string& output = "Y",
                                int threads = 0) {
  REDUCE_ASSIGN(TensorMap out, run(text, inputs, {output}, threads));
  return out.at(output);
}

// The outputs of a run expected to succeed (empty, and the test failed, when it does not).
inline TensorMap run_ok(const Model& m, const TensorMap& in, int threads = 0) {
  auto out = run_model(m, in, threads);
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? std::move(out).value() : TensorMap{};
}

// The error message of a run (one thread) expected to fail; empty when it unexpectedly succeeds.
inline std::string run_error(const Model& m, const TensorMap& inputs) {
  auto out = run_model(m, inputs, 1);
  return out.ok() ? std::string() : out.error().message();
}
inline std::string run_error(const std::string& text, const TensorMap& inputs) {
  return run_error(testing::parse_model(text), inputs);
}

// The one output Y of `m` on `engine`, fed `inputs`.
inline Expected<Tensor> run_on(Engine& engine, const Model& m, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  REDUCE_ASSIGN(auto prepared, engine.prepare(m));
  TensorMap feed;
  for (const auto& [name, t] : inputs) feed[name] = t;
  RunOptions options;
  options.outputs = {"Y"};
  REDUCE_ASSIGN(auto out, prepared->run(feed, options));
  return out.at("Y");
}
inline Expected<Tensor> run_ref(const Model& m, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  return run_on(*make_reference_engine(), m, inputs);
}

// -- checks

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The run fails with a message naming `what` (the attribute or input at fault), not for another reason.
inline void expect_error(const Expected<TensorMap>& out, const std::string& what) {
  ASSERT_FALSE(out.ok()) << "expected an error about " << what;
  EXPECT_NE(out.error().message().find(what), std::string::npos) << out.error().message();
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// Every output is bit-identical with 1 and 2 threads.
inline void expect_same_for_one_and_two_threads(const char* text, const TensorMap& in) {
  Model m = testing::parse_model(text);
  TensorMap one = run_ok(m, in, 1), two = run_ok(m, in, 2);
  ASSERT_FALSE(one.empty());
  for (const auto& [name, t] : one) EXPECT_TRUE(t.equals(two.at(name))) << name;
}

// The outputs with 1 and 4 threads are bit-identical.
inline void expect_same_for_thread_counts(const std::string& text, const TensorMap& inputs,
                                          const std::vector<std::string>& outputs) {
  auto one = run(text, inputs, outputs, 1);
  auto four = run(text, inputs, outputs, 4);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(four.ok()) << four.error().message();
  for (const auto& name : outputs) {
    const Tensor &a = one->at(name), &b = four->at(name);
    ASSERT_EQ(a.byte_size(), b.byte_size());
    EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.byte_size()), 0) << name;
  }
}

}  // namespace reduce::op_test
