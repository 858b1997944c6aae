// Where error is born: local error (each node alone on its reference inputs) against accumulated
// error (the whole model), on an fp16 overflow and on a fault of one node.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/fault_models.h"
#include "oracle/error_origin.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::kBroadcastChain;
using testing::kSquareOverflow;
using testing::parse_model;

Tensor wave(Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i) + 0.3));
  return Tensor::from_vector(DType::Float, std::move(shape), v).value();
}

struct Traced {
  Model model;
  std::unique_ptr<Oracle> oracle;
  ErrorOrigin origin;

  const ValueError& value(const std::string& name) const {
    for (const auto& v : origin.values)
      if (v.value == name) return v;
    ADD_FAILURE() << "no value " << name;
    return origin.values.front();
  }
  std::string name_of(std::optional<size_t> k) const { return k ? origin.values[*k].value : "(none)"; }
};

std::unique_ptr<Traced> trace(const char* text, const std::string& engine, std::vector<NamedTensor> inputs,
                              ErrorOriginOptions options = {}) {
  auto t = std::make_unique<Traced>();
  t->model = parse_model(text);
  OracleOptions o;
  o.engine = engine;
  o.tolerance = default_tolerance(parse_engine_spec(engine).value().precision());
  auto oracle = Oracle::create(t->model, std::move(inputs), o);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  t->oracle = std::move(oracle).value();
  auto layers = compare_layers(*t->oracle);
  EXPECT_TRUE(layers.ok()) << layers.error().message();
  t->origin = trace_error_origin(*t->oracle, *layers, options);
  return t;
}

std::unique_ptr<Traced> square_overflow(ErrorOriginOptions options = {}) {
  return trace(kSquareOverflow, "opt:fp16", {{"X", wave({4, 16})}}, options);
}

TEST(ErrorOrigin, TheSquareThatOverflowsIsWhereTheNonFiniteValueIsBorn) {
  auto t = square_overflow();
  EXPECT_EQ(t->name_of(t->origin.first_nonfinite), "square");
  EXPECT_EQ(t->name_of(t->origin.nonfinite_born), "square");
  EXPECT_TRUE(adds_error(t->value("square")));
  EXPECT_GT(t->value("square").out_of_range, 0u);
  ASSERT_EQ(t->origin.top_local.size(), 1u);
  EXPECT_EQ(t->name_of(t->origin.top_local[0]), "square");
}

TEST(ErrorOrigin, NodesAfterTheOverflowOnlyInheritIt) {
  auto t = square_overflow();
  // Non-finite in the whole model, and even alone: their reference inputs are beyond fp16.
  for (const char* v : {"var", "ve", "std"}) {
    EXPECT_FALSE(t->value(v).accumulated.passed) << v;
    EXPECT_FALSE(adds_error(t->value(v))) << v;
    EXPECT_FALSE(t->value(v).unfed_input.empty()) << v;
  }
  EXPECT_EQ(t->value("var").unfed_input, "square");
  // Wrong in the whole model, accurate alone.
  for (const char* v : {"normed", "Y"}) {
    EXPECT_FALSE(t->value(v).accumulated.passed) << v;
    ASSERT_TRUE(t->value(v).local.has_value()) << v;
    EXPECT_TRUE(t->value(v).local->passed) << v;
  }
}

TEST(ErrorOrigin, TheOutputsErrorComesFromTheSquare) {
  auto t = square_overflow();
  EXPECT_EQ(t->name_of(t->origin.worst_output), "Y");
  ASSERT_EQ(t->origin.sources.size(), 1u);
  EXPECT_EQ(t->name_of(t->origin.sources[0]), "square");
  EXPECT_EQ(t->origin.precision, Precision::FP16);
}

TEST(ErrorOrigin, AFaultyNodeAddsTheErrorItsConsumersInherit) {
  auto t = trace(kBroadcastChain, "opt:fault=broadcast-batch1", {{"X", wave({1, 4, 3, 3})}, {"M", wave({1, 1, 3, 3})}});
  EXPECT_FALSE(t->origin.first_nonfinite.has_value());
  EXPECT_TRUE(adds_error(t->value("c")));
  for (const char* v : {"a", "b", "d", "e", "Y"}) EXPECT_FALSE(adds_error(t->value(v))) << v;
  ASSERT_EQ(t->origin.sources.size(), 1u);
  EXPECT_EQ(t->name_of(t->origin.sources[0]), "c");
}

TEST(ErrorOrigin, EveryNumberOfJobsGivesTheSameLocalErrors) {
  ErrorOriginOptions one, four;
  four.jobs = 4;
  auto a = square_overflow(one), b = square_overflow(four);
  ASSERT_EQ(a->origin.values.size(), b->origin.values.size());
  for (size_t k = 0; k < a->origin.values.size(); ++k) {
    const auto& x = a->origin.values[k];
    const auto& y = b->origin.values[k];
    ASSERT_EQ(x.local.has_value(), y.local.has_value()) << x.value;
    if (x.local) {
      EXPECT_EQ(x.local->max_abs, y.local->max_abs) << x.value;
    }
  }
  EXPECT_EQ(a->origin.sources, b->origin.sources);
  EXPECT_EQ(a->origin.top_local, b->origin.top_local);
}

TEST(ErrorOrigin, TheBoundRunsTheNodeWhereErrorGrowsFirst) {
  ErrorOriginOptions bounded;
  bounded.max_local_runs = 1;
  auto t = square_overflow(bounded);
  EXPECT_EQ(t->origin.local_runs, 1u);
  EXPECT_EQ(t->origin.nodes_skipped, t->origin.values.size() - 1);
  EXPECT_TRUE(t->value("square").local.has_value());
  EXPECT_FALSE(t->value("var").local.has_value());
  EXPECT_EQ(t->name_of(t->origin.nonfinite_born), "square");
}

TEST(ErrorOrigin, ScoresNonFiniteAndStructuralFailuresAsInfinite) {
  OutputComparison c;
  c.ratio = 3;
  EXPECT_EQ(error_score(c), 3);
  c.nonfinite_new = 1;
  EXPECT_TRUE(std::isinf(error_score(c)));
  OutputComparison s;
  s.structural_problem = "engine gives float[2], reference float[3]";
  EXPECT_TRUE(std::isinf(error_score(s)));
}

}  // namespace
}  // namespace reduce
