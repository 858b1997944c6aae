// The corpus on the engines it targets: every small and medium model fails on its manifest engine
// with its manifest kind and passes on `opt` without faults; its ground-truth reproducer, fed the
// values recorded by the reference, still fails, and is minimal (no node of it can go, and no other
// single node fails alone the same way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/extract.h"
#include "corpus_support.h"
#include "adapters/engine_spec.h"

namespace reduce {
namespace {

using corpus::GeneratedModel;

// How a run compares with the reference: Polygraphy's |a - b| <= 1e-4 + 1e-3 |b| per element, and
// non-finite values where the reference is finite as a class of their own.
enum class Outcome { Pass, Mismatch, Nonfinite, Error };

const char* name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::Mismatch: return "mismatch";
    case Outcome::Nonfinite: return "nonfinite";
    case Outcome::Error: return "error";
  }
  return "?";
}

Outcome compare(const TensorMap& actual, const Model& model, const TensorMap& expected) {
  bool mismatch = false;
  for (const auto& vi : model.graph.outputs) {
    const Tensor& b = expected.at(vi.name);
    auto it = actual.find(vi.name);
    if (it == actual.end() || it->second.shape() != b.shape() || it->second.dtype() != DType::Float)
      return Outcome::Error;
    auto av = it->second.data<float>();
    auto bv = b.data<float>();
    for (size_t i = 0; i < av.size(); ++i) {
      if (std::isfinite(bv[i]) && !std::isfinite(av[i])) return Outcome::Nonfinite;
      if (!(std::fabs(av[i] - bv[i]) <= 1e-4 + 1e-3 * std::fabs(bv[i]))) mismatch = true;
    }
  }
  return mismatch ? Outcome::Mismatch : Outcome::Pass;
}

Outcome run_on(std::string_view spec, const Model& model, const TensorMap& inputs, const TensorMap& expected) {
  auto engine = make_engine(spec);
  EXPECT_TRUE(engine.ok()) << engine.error().message();
  if (!engine.ok()) return Outcome::Error;
  auto prepared = (*engine)->prepare(model);
  if (!prepared.ok()) return Outcome::Error;
  auto out = (*prepared)->run(inputs);
  if (!out.ok()) return Outcome::Error;
  return compare(*out, model, expected);
}

Outcome expected_outcome(std::string_view kind) {
  return kind == "mismatch" ? Outcome::Mismatch : kind == "nonfinite" ? Outcome::Nonfinite : Outcome::Error;
}

// A generated model with its seeded inputs and every value the reference computes from them.
struct Recorded {
  GeneratedModel g;
  TensorMap inputs;
  TensorMap values;  // graph inputs and every node output
};

Recorded record(const corpus::Family& family, size_t size) {
  Recorded r{corpus::generate(family, size, corpus::kDefaultSeed), {}, {}};
  r.inputs = testing::seeded_inputs(r.g.model);
  r.values = testing::record_reference(r.g.model, r.inputs);
  for (const auto& [name, t] : r.inputs) r.values.emplace(name, t);
  return r;
}

// The candidate made of `nodes`: cut values fed with their recorded values, outputs expected as recorded.
Outcome run_candidate(const Recorded& r, const Extractor& extractor, std::vector<size_t> nodes) {
  auto sub = extractor.extract(nodes);
  EXPECT_TRUE(sub.ok()) << sub.error().message();
  if (!sub.ok()) return Outcome::Error;
  TensorMap inputs, expected;
  for (const auto& vi : sub->graph.inputs)
    if (!sub->graph.find_initializer(vi.name)) inputs.emplace(vi.name, r.values.at(vi.name));
  for (const auto& vi : sub->graph.outputs) expected.emplace(vi.name, r.values.at(vi.name));
  return run_on(r.g.family->engine, *sub, inputs, expected);
}

TEST(CorpusFailures, EveryModelFailsOnItsEngineWithItsKindAndPassesOnOpt) {
  for (const auto& f : corpus::families())
    for (size_t size : {10, 100, 1000}) {
      auto r = record(f, size);
      SCOPED_TRACE(r.g.file_name);
      TensorMap expected;
      for (const auto& vi : r.g.model.graph.outputs) expected.emplace(vi.name, r.values.at(vi.name));
      EXPECT_STREQ(name(run_on(f.engine, r.g.model, r.inputs, expected)), name(expected_outcome(f.kind)));
      EXPECT_STREQ(name(run_on("opt", r.g.model, r.inputs, expected)), "pass");
    }
}

TEST(CorpusFailures, TheGroundTruthReproducerFailsTheSameWay) {
  for (const auto& f : corpus::families())
    for (size_t size : {10, 100, 1000}) {
      auto r = record(f, size);
      SCOPED_TRACE(r.g.file_name);
      auto extractor = Extractor::create(r.g.model);
      ASSERT_TRUE(extractor.ok()) << extractor.error().message();
      EXPECT_STREQ(name(run_candidate(r, *extractor, r.g.minimal_nodes)), name(expected_outcome(f.kind)));
    }
}

TEST(CorpusFailures, TheGroundTruthReproducerIsMinimal) {
  for (const auto& f : corpus::families()) {
    auto r = record(f, 100);
    SCOPED_TRACE(r.g.file_name);
    auto extractor = Extractor::create(r.g.model);
    ASSERT_TRUE(extractor.ok()) << extractor.error().message();
    const Outcome failure = expected_outcome(f.kind);
    const auto& minimal = r.g.minimal_nodes;
    // No node of the reproducer can go.
    if (minimal.size() > 1)
      for (size_t drop : minimal) {
        std::vector<size_t> rest;
        std::copy_if(minimal.begin(), minimal.end(), std::back_inserter(rest), [&](size_t n) { return n != drop; });
        EXPECT_NE(run_candidate(r, *extractor, rest), failure) << "without " << r.g.model.graph.nodes[drop].name;
      }
    // No single node fails alone the same way, except a one-node reproducer itself.
    for (size_t i = 0; i < r.g.model.graph.nodes.size(); ++i) {
      if (minimal.size() == 1 && i == minimal[0]) continue;
      EXPECT_NE(run_candidate(r, *extractor, {i}), failure) << r.g.model.graph.nodes[i].name << " alone";
    }
  }
}

}  // namespace
}  // namespace reduce
