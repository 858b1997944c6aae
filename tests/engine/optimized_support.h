// Helpers for the optimized-engine tests: run a model on `ref` and on an `opt` spec and compare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"
#include "adapters/engine_spec.h"
#include "engine/optimized.h"
#include "test_support.h"

namespace reduce::testing {

inline Tensor floats(Shape shape, std::vector<float> v) {
  return Tensor::from_vector(DType::Float, std::move(shape), v).value();
}

// Deterministic float values in [lo, hi) (a small LCG: tests need variety, not quality).
inline Tensor ramp(Shape shape, float lo = -1, float hi = 1, uint32_t seed = 1) {
  const uint64_t n = element_count(shape).value();
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return floats(std::move(shape), v);
}

inline std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

inline TensorMap run_spec(const std::string& spec, const Model& m, const TensorMap& in, const RunOptions& options = {}) {
  auto engine = make_engine(spec);
  EXPECT_TRUE(engine.ok()) << engine.error().message();
  if (!engine.ok()) return {};
  auto prepared = (*engine)->prepare(m);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  auto out = (*prepared)->run(in, options);
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? std::move(*out) : TensorMap{};
}

// The report of an opt spec's plan for the requested outputs.
inline OptimizationReport report_of(const std::string& spec, const Model& m, const std::vector<std::string>& outputs = {}) {
  auto engine = make_engine(spec);
  EXPECT_TRUE(engine.ok()) << engine.error().message();
  if (!engine.ok()) return {};
  auto prepared = (*engine)->prepare(m);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  auto* optimized = dynamic_cast<OptimizedPreparedModel*>(prepared->get());
  EXPECT_NE(optimized, nullptr);
  if (!optimized) return {};
  auto report = optimized->report(outputs);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return report.ok() ? *report : OptimizationReport{};
}

// max |a - b| over two float tensors of one shape (NaN anywhere gives NaN).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  double m = 0;
  for (uint64_t i = 0; i < a.elements(); ++i) {
    const double d = std::abs(a.element_as_double(i) - b.element_as_double(i));
    if (std::isnan(d)) return NAN;
    m = std::max(m, d);
  }
  return m;
}

inline bool has_nan_or_inf(const Tensor& t) {
  for (uint64_t i = 0; i < t.elements(); ++i)
    if (!std::isfinite(t.element_as_double(i))) return true;
  return false;
}

// Every output of `spec` is within `tol` of the reference engine's.
inline void expect_matches_reference(const std::string& spec, const Model& m, const TensorMap& in, double tol = 1e-5,
                                     const RunOptions& options = {}) {
  const TensorMap ref = run_spec("ref", m, in, options), opt = run_spec(spec, m, in, options);
  ASSERT_EQ(ref.size(), opt.size());
  for (const auto& [name, t] : ref) {
    ASSERT_TRUE(opt.count(name)) << name;
    EXPECT_EQ(t.dtype(), opt.at(name).dtype()) << name;
    EXPECT_LE(max_abs_diff(t, opt.at(name)), tol) << spec << " output " << name;
  }
}

}  // namespace reduce::testing
